#include "sitepatch/site/wheel.hpp"

#include <algorithm>
#include <cctype>

#include "sitepatch/util/error.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::site {

std::string WheelName::file() const {
  return name + "-" + version + (build.empty() ? "" : "-" + build) + "-" + python + "-" + abi + "-" + platform +
         ".whl";
}

std::optional<WheelName> parse_wheel_name(std::string_view file) {
  if (!util::ends_with(file, ".whl")) return std::nullopt;
  std::vector<std::string> parts = util::split(std::string(file.substr(0, file.size() - 4)), '-');
  if (parts.size() != 5 && parts.size() != 6) return std::nullopt;
  for (auto& p : parts)
    if (p.empty()) return std::nullopt;
  // A version and a build tag start with a digit: a name with an unescaped '-' is no wheel's.
  if (!std::isdigit(static_cast<unsigned char>(parts[1][0])) ||
      (parts.size() == 6 && !std::isdigit(static_cast<unsigned char>(parts[2][0]))))
    return std::nullopt;
  WheelName w;
  size_t i = 0;
  w.name = parts[i++];
  w.version = parts[i++];
  if (parts.size() == 6) w.build = parts[i++];
  w.python = parts[i++];
  w.abi = parts[i++];
  w.platform = parts[i++];
  return w;
}

std::string installed_rel(std::string_view member) {
  size_t slash = member.find('/');
  if (slash == std::string_view::npos || !util::ends_with(member.substr(0, slash), ".data")) return std::string(member);
  std::string_view rest = member.substr(slash + 1);
  for (std::string_view scheme : {"purelib/", "platlib/"})
    if (util::starts_with(rest, scheme)) return std::string(rest.substr(scheme.size()));
  return "";
}

std::string with_local_label(std::string_view version, std::string_view label) {
  return std::string(version) + (version.find('+') == std::string_view::npos ? "+" : ".") + std::string(label);
}

std::string with_metadata_version(std::string_view metadata, std::string_view version) {
  // The headers as parse_metadata reads them: up to the first empty line, a header's key
  // in any case, continuation lines skipped.
  for (size_t at = 0; at < metadata.size();) {
    size_t nl = metadata.find('\n', at);
    size_t end = nl == std::string_view::npos ? metadata.size() : nl;
    std::string_view line = metadata.substr(at, end - at);
    bool cr = util::ends_with(line, "\r");
    if (cr) line.remove_suffix(1);
    if (line.empty()) break;  // the body (the description) starts here
    size_t colon = line.find(':');
    if (line[0] != ' ' && line[0] != '\t' && colon != std::string_view::npos) {
      std::string key = util::trim(line.substr(0, colon));
      std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return std::tolower(c); });
      if (key == "version")
        return std::string(metadata.substr(0, at)) + "Version: " + std::string(version) + (cr ? "\r" : "") +
               std::string(metadata.substr(end));
    }
    at = end + 1;
  }
  throw Error("the wheel's METADATA has no Version header");
}

namespace {

// As Python's csv.writer (QUOTE_MINIMAL) writes a field.
std::string csv_field(const std::string& f) {
  if (f.find_first_of(",\"\r\n") == std::string::npos) return f;
  std::string out = "\"";
  for (char c : f) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string format_record(const std::vector<RecordEntry>& rows) {
  std::string out;
  for (auto& r : rows) out += csv_field(r.path) + "," + csv_field(r.hash) + "," + csv_field(r.size) + "\n";
  return out;
}

std::string extension_suffix(std::string_view member) {
  std::string_view base = member.substr(member.rfind('/') == std::string_view::npos ? 0 : member.rfind('/') + 1);
  if (!util::ends_with(base, ".so") && !util::ends_with(base, ".pyd")) return "";
  size_t dot = base.find('.');
  return dot == 0 ? "" : std::string(base.substr(dot));
}

}  // namespace sitepatch::site
