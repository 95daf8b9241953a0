// PEP 440 versions: parsing (every spelling the spec normalizes) and ordering.
#include "sitepatch/recipe/version.hpp"

#include <algorithm>
#include <cctype>
#include <regex>

#include "sitepatch/util/strings.hpp"

namespace sitepatch::recipe {

namespace {

// The PEP 440 appendix regex (what `packaging` uses), matched case-insensitively.
const std::regex& version_regex() {
  static const std::regex re(
      R"(^\s*v?)"
      R"((?:([0-9]+)!)?)"                                                    // 1 epoch
      R"(([0-9]+(?:\.[0-9]+)*))"                                             // 2 release
      R"((?:[-_.]?(alpha|a|beta|b|preview|pre|c|rc)[-_.]?([0-9]+)?)?)"       // 3,4 pre
      R"((?:-([0-9]+)|[-_.]?(post|rev|r)[-_.]?([0-9]+)?)?)"                  // 5 | 6,7 post
      R"((?:[-_.]?(dev)[-_.]?([0-9]+)?)?)"                                   // 8,9 dev
      R"((?:\+([a-z0-9]+(?:[-_.][a-z0-9]+)*))?)"                             // 10 local
      R"(\s*$)",
      std::regex::ECMAScript | std::regex::icase | std::regex::optimize);
  return re;
}

// A number from the version text (0 when absent, as in "1.0rc"); nullopt when too big.
std::optional<long> number(const std::ssub_match& m) {
  if (!m.matched || m.length() == 0) return 0L;
  std::string s = m.str();
  size_t nz = s.find_first_not_of('0');
  if (nz == std::string::npos) return 0L;
  if (s.size() - nz > 18) return std::nullopt;
  return std::stol(s.substr(nz));
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Local segments compare numerically when both are numbers; a number sorts after text.
int compare_local(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return a.empty() == b.empty() ? 0 : (a.empty() ? -1 : 1);
  auto xs = util::split(a, '.'), ys = util::split(b, '.');
  auto is_num = [](const std::string& s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  for (size_t i = 0; i < std::min(xs.size(), ys.size()); ++i) {
    bool nx = is_num(xs[i]), ny = is_num(ys[i]);
    int c = 0;
    if (nx && ny) {
      std::string x = xs[i].substr(std::min(xs[i].find_first_not_of('0'), xs[i].size()));
      std::string y = ys[i].substr(std::min(ys[i].find_first_not_of('0'), ys[i].size()));
      c = x.size() != y.size() ? (x.size() < y.size() ? -1 : 1) : x.compare(y);
    } else if (nx != ny) {
      c = nx ? 1 : -1;
    } else {
      c = xs[i].compare(ys[i]);
    }
    if (c) return c < 0 ? -1 : 1;
  }
  return xs.size() == ys.size() ? 0 : (xs.size() < ys.size() ? -1 : 1);
}

template <typename T>
int cmp(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

}  // namespace

std::optional<Version> Version::parse(std::string_view s) {
  // std::regex recurses per character: a long enough text overflows the stack. No
  // real version comes near this.
  if (s.size() > 256) return std::nullopt;
  std::string text(s);
  std::smatch m;
  if (!std::regex_match(text, m, version_regex())) return std::nullopt;
  Version v;
  v.text = util::trim(text);
  auto epoch = number(m[1]);
  if (!epoch || *epoch > 1000000) return std::nullopt;
  v.epoch = static_cast<int>(*epoch);
  for (const auto& part : util::split(m[2].str(), '.')) {
    size_t nz = part.find_first_not_of('0');
    if (nz != std::string::npos && part.size() - nz > 18) return std::nullopt;
    v.release.push_back(nz == std::string::npos ? 0L : std::stol(part.substr(nz)));
  }
  if (m[3].matched) {
    std::string l = lower(m[3].str());
    char letter = (l == "a" || l == "alpha") ? 'a' : (l == "b" || l == "beta") ? 'b' : 'c';
    auto n = number(m[4]);
    if (!n) return std::nullopt;
    v.pre = std::make_pair(letter, *n);
  }
  if (m[5].matched || m[6].matched) {
    auto n = number(m[5].matched ? m[5] : m[7]);
    if (!n) return std::nullopt;
    v.post = *n;
  }
  if (m[8].matched) {
    auto n = number(m[9]);
    if (!n) return std::nullopt;
    v.dev = *n;
  }
  if (m[10].matched) {
    v.local = lower(m[10].str());
    std::replace(v.local.begin(), v.local.end(), '-', '.');
    std::replace(v.local.begin(), v.local.end(), '_', '.');
  }
  return v;
}

std::string Version::normalized() const {
  std::string out = epoch ? std::to_string(epoch) + "!" : "";
  for (size_t i = 0; i < release.size(); ++i) out += (i ? "." : "") + std::to_string(release[i]);
  if (pre) out += (pre->first == 'c' ? std::string("rc") : std::string(1, pre->first)) + std::to_string(pre->second);
  if (post) out += ".post" + std::to_string(*post);
  if (dev) out += ".dev" + std::to_string(*dev);
  if (!local.empty()) out += "+" + local;
  return out;
}

int Version::compare(const Version& o) const {
  if (int c = cmp(epoch, o.epoch)) return c;

  // Release: trailing zeros do not count (1.0 == 1.0.0).
  size_t n = std::max(release.size(), o.release.size());
  for (size_t i = 0; i < n; ++i) {
    long a = i < release.size() ? release[i] : 0;
    long b = i < o.release.size() ? o.release[i] : 0;
    if (int c = cmp(a, b)) return c;
  }

  // Pre-release: a bare dev release sorts before every pre-release of its release;
  // no pre-release sorts after all of them. Ranks: dev-only 0, pre 1, final 2.
  auto pre_key = [](const Version& v) {
    if (!v.pre && !v.post && v.dev) return std::make_tuple(0, '\0', 0L);
    if (!v.pre) return std::make_tuple(2, '\0', 0L);
    return std::make_tuple(1, v.pre->first, v.pre->second);
  };
  if (int c = cmp(pre_key(*this), pre_key(o))) return c;

  // Post-release: none sorts first.
  auto post_key = [](const Version& v) { return v.post ? *v.post + 1 : 0L; };
  if (int c = cmp(post_key(*this), post_key(o))) return c;

  // Dev release: none sorts last.
  auto dev_key = [](const Version& v) { return std::make_pair(!v.dev, v.dev.value_or(0)); };
  if (int c = cmp(dev_key(*this), dev_key(o))) return c;

  return compare_local(local, o.local);
}

std::string normalize_name(std::string_view name) {
  // re.sub(r"[-_.]+", "-", name).lower()
  std::string out;
  for (char c : name) {
    bool sep = c == '-' || c == '_' || c == '.';
    if (!sep) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (out.empty() || out.back() != '-') out += '-';
  }
  return out;
}

std::string up_to_next_minor(const std::string& dist, const std::string& version) {
  auto v = Version::parse(version);
  if (!v || v->release.empty()) return dist + "==" + version;
  std::string next = v->release.size() == 1 ? std::to_string(v->release[0] + 1)
                                            : std::to_string(v->release[0]) + "." + std::to_string(v->release[1] + 1);
  // A local label (`2.13.0+cpu`) goes only with == in a specifier: the public version is
  // the floor, and it admits the same local builds.
  return dist + ">=" + version.substr(0, version.find('+')) + ",<" + next;
}

}  // namespace sitepatch::recipe
