#include "sitepatch/site/environment.hpp"

#include <cctype>

#include "sitepatch/util/strings.hpp"

namespace sitepatch::site {
namespace {

// Python identifiers may hold non-ASCII letters; accept any byte >= 0x80 and let
// the file lookup decide.
bool ident_start(unsigned char c) { return c == '_' || std::isalpha(c) || c >= 0x80; }
bool ident_char(unsigned char c) { return ident_start(c) || std::isdigit(c); }

bool is_identifier(std::string_view s) {
  if (s.empty() || !ident_start(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!ident_char(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

std::optional<std::string> unsafe_relative_path(std::string_view rel) {
  if (rel.empty()) return std::string("the path is empty");
  if (rel[0] == '/') return std::string("the path is absolute; it must be relative to site-packages");
  if (rel.find('\\') != std::string_view::npos) return std::string("the path contains a backslash");
  if (rel.find('\0') != std::string_view::npos) return std::string("the path contains a NUL byte");
  for (const std::string& seg : util::split(rel, '/')) {
    if (seg.empty()) return std::string("the path has an empty segment ('//' or a trailing '/')");
    if (seg == ".") return std::string("the path has a '.' segment");
    if (seg == "..") return std::string("the path has a '..' segment; it must stay inside site-packages");
  }
  return std::nullopt;
}

std::vector<std::string> compiled_twins(std::string_view rel, const std::vector<std::string>& ext_suffixes) {
  std::vector<std::string> out;
  if (rel.size() < 4 || rel.substr(rel.size() - 3) != ".py") return out;
  std::string stem(rel.substr(0, rel.size() - 3));
  bool init = stem == "__init__" || (stem.size() > 9 && stem.compare(stem.size() - 9, 9, "/__init__") == 0);
  if (!init)
    for (auto& suffix : ext_suffixes) out.push_back(stem + "/__init__" + suffix);
  for (auto& suffix : ext_suffixes) out.push_back(stem + suffix);
  return out;
}

std::vector<std::string> module_candidates(std::string_view module) {
  std::vector<std::string> parts = util::split(module, '.');
  for (auto& p : parts)
    if (!is_identifier(p)) return {};
  std::string base = util::join(parts, "/");
  return {base + ".py", base + "/__init__.py"};
}

std::string module_for_file(std::string_view rel) {
  if (!util::ends_with(rel, ".py")) return {};
  rel.remove_suffix(3);
  std::vector<std::string> parts = util::split(rel, '/');
  if (!parts.empty() && parts.back() == "__init__") parts.pop_back();
  return util::join(parts, ".");
}

bool is_pyc_of(std::string_view name, std::string_view stem) {
  // stem.<tag>.pyc or stem.<tag>.opt-<n>.pyc, with a tag such as cpython-311.
  if (stem.empty() || !util::starts_with(name, stem) || !util::ends_with(name, ".pyc")) return false;
  std::string_view rest = name.substr(stem.size());
  if (rest.size() < 5 || rest[0] != '.') return false;
  rest = rest.substr(1, rest.size() - 5);  // "<tag>" or "<tag>.opt-<n>"
  std::vector<std::string> parts = util::split(rest, '.');
  if (parts[0].empty()) return false;
  if (parts.size() == 1) return true;
  return parts.size() == 2 && util::starts_with(parts[1], "opt-") && parts[1].size() > 4;
}

bool is_within(std::string_view path, std::string_view dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.remove_suffix(1);
  if (path == dir) return true;
  if (dir == "/") return !path.empty() && path[0] == '/';
  return path.size() > dir.size() && util::starts_with(path, dir) && path[dir.size()] == '/';
}

}  // namespace sitepatch::site

namespace sitepatch::site {

std::string shared_owner(const Environment& env, const std::string& dir) {
  bool pth = false;
  for (auto& d : env.pth_dirs) pth = pth || d == dir;
  if (is_within(dir, env.prefix) && !pth) return "";
  if (pth) return "a folder on sys.path that a .pth file (or PYTHONPATH) adds, not this environment's own";
  bool system_python = is_within(dir, "/usr/lib") || is_within(dir, "/usr/local/lib") || is_within(dir, "/usr/share");
  if (system_python && env.dpkg && is_within(dir, "/usr/lib"))
    return "the system Python (Debian's dpkg owns its files: apt upgrade replaces them)";
  if (system_python) return "the system Python";
  if (!env.base_prefix.empty() && env.base_prefix != env.prefix && is_within(dir, env.base_prefix))
    return "the base interpreter at " + env.base_prefix;
  return "another Python installation";
}

}  // namespace sitepatch::site

namespace sitepatch::site {

std::string default_state_dir(const std::string& prefix) {
  if (prefix == "/usr" || prefix == "/usr/local") return "/var/lib/sitepatch" + prefix;
  return prefix + "/.sitepatch";
}

std::optional<HistoryHome> history_home(const Environment& env, const std::string& dir) {
  std::string owner = shared_owner(env, dir);
  if (owner.empty()) return std::nullopt;
  bool pth = false;
  for (auto& d : env.pth_dirs) pth = pth || d == dir;
  std::string prefix = dir;  // a folder of its own: its history travels with it
  if (!pth && !env.base_prefix.empty() && is_within(dir, env.base_prefix)) prefix = env.base_prefix;
  else if (!pth && is_within(dir, "/usr")) prefix = "/usr";
  return HistoryHome{prefix, default_state_dir(prefix), owner};
}

}  // namespace sitepatch::site
