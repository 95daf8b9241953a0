// A source wheel read once, for `sitepatch wheel`: its members (each name a safe relative
// path, each once), its own dist-info, its METADATA's version, its RECORD, the bytes of
// its Python sources (all of them together bounded: a zip bomb says small and inflates
// large). A wheel sitepatch already built is refused: its recipes would be lost.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "engine/wheel/wheel_impl.hpp"
#include "sitepatch/recipe/version.hpp"
#include "sitepatch/site/environment.hpp"
#include "sitepatch/util/error.hpp"
#include "sitepatch/util/strings.hpp"

namespace fs = std::filesystem;

namespace sitepatch::engine::detail {
namespace {

// What a wheel's Python sources may inflate to in all (torch's are about 60 MB).
constexpr size_t kMaxSourceBytes = size_t(512) << 20;

// The one top-level `*.dist-info/` folder with a METADATA: the wheel's own.
std::string dist_info_of(const std::vector<util::ZipMember>& members, const std::string& path) {
  std::set<std::string> found;
  for (auto& m : members) {
    size_t slash = m.name.find('/');
    if (slash != std::string::npos && m.name.substr(slash) == "/METADATA" &&
        util::ends_with(m.name.substr(0, slash), ".dist-info"))
      found.insert(m.name.substr(0, slash));
  }
  if (found.size() != 1)
    throw Error(path + ": not a wheel: " +
                (found.empty() ? std::string("no .dist-info folder with a METADATA")
                               : "several .dist-info folders (" + util::join({found.begin(), found.end()}, ", ") + ")"));
  return *found.begin();
}

void check_member_names(const std::vector<util::ZipMember>& members, const std::string& path) {
  std::set<std::string> seen;
  for (auto& m : members) {
    std::string name = m.dir ? m.name.substr(0, m.name.size() - 1) : m.name;
    auto why = site::unsafe_relative_path(name);
    if (!why && std::any_of(name.begin(), name.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; }))
      why = "it holds a control character";
    if (why) throw Error(path + ": refusing a wheel whose member " + util::printable(m.name) + " is unsafe: " + *why);
    if (!seen.insert(name).second)
      throw Error(path + ": refusing a wheel with two members named " + util::printable(name) +
                  " (which one pip installs depends on the installer)");
  }
  // A file that is also a folder of other members ("a.py" and "a.py/b.py").
  std::set<std::string> folders;
  for (auto& m : members)
    for (size_t at = m.name.find('/'); at != std::string::npos && at + 1 < m.name.size(); at = m.name.find('/', at + 1))
      folders.insert(m.name.substr(0, at));
  for (auto& m : members)
    if (!m.dir && folders.count(m.name))
      throw Error(path + ": refusing a wheel whose member " + util::printable(m.name) + " is a file and a folder");
}

// The version METADATA says, in PEP 440's normal form.
std::string version_of(const SourceWheel& w) {
  if (w.version.empty()) throw Error(w.path + ": not a wheel: " + w.dist_info + "/METADATA has no Version");
  auto v = recipe::Version::parse(w.version);
  if (!v) throw Error(w.path + ": its METADATA's Version " + w.version + " is not a version PEP 440 reads");
  return v->normalized();
}

}  // namespace

SourceWheel read_wheel(const std::string& path, const std::string& name) {
  SourceWheel w;
  w.path = path;
  auto parsed = site::parse_wheel_name(name);
  if (!parsed)
    throw Error(path + ": not a wheel's file name (NAME-VERSION[-BUILD]-PYTHON-ABI-PLATFORM.whl)", Exit::usage);
  w.name = *parsed;
  auto members = util::list_zip(path);
  if (!members) throw Error(members.error());
  w.members = std::move(*members);
  check_member_names(w.members, path);
  w.dist_info = dist_info_of(w.members, path);
  std::string stem = w.dist_info.substr(0, w.dist_info.size() - std::string(".dist-info").size());
  std::set<std::string> suffixes;
  for (auto& m : w.members) {
    if (m.name == w.dist_info + "/sitepatch/provenance.json")
      throw Error(path + " was written by sitepatch wheel (its dist-info keeps sitepatch/provenance.json): build "
                  "from the wheel it was made from, with every recipe at once");
    if (util::starts_with(m.name, stem + ".data/")) w.data_dir = stem + ".data";
    std::string suffix = site::extension_suffix(m.name);
    if (!suffix.empty() && !site::installed_rel(m.name).empty()) {
      ++w.compiled;
      if (suffixes.insert(suffix).second) w.ext_suffixes.push_back(suffix);
    }
  }
  auto info = util::read_zip(path, [&](const std::string& m) {
    return m == w.dist_info + "/METADATA" || m == w.dist_info + "/RECORD";
  });
  if (!info) throw Error(info.error());
  w.metadata = (*info)[w.dist_info + "/METADATA"];
  w.record = (*info)[w.dist_info + "/RECORD"];
  if (w.record.empty()) throw Error(path + ": not a wheel: " + w.dist_info + "/RECORD is missing or empty");
  std::tie(w.dist_name, w.version) = site::parse_metadata(w.metadata);
  w.version = version_of(w);
  auto sources = util::read_zip(
      path, [&](const std::string& m) { return util::ends_with(m, ".py") && !site::installed_rel(m).empty(); },
      kMaxSourceBytes);
  if (!sources) throw Error(sources.error());
  w.sources = std::move(*sources);
  return w;
}

std::string kept_recipe_name(const std::string& id) {
  std::string out;
  for (char c : id) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_') ? c : '_';
  return out + ".yaml";
}

}  // namespace sitepatch::engine::detail
