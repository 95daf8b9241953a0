#include "host/start_check.hpp"

#include <glob.h>
#include <sys/stat.h>

#include <cctype>
#include <cstdlib>
#include <climits>

#include "sitepatch/util/error.hpp"
#include "sitepatch/util/file.hpp"
#include "sitepatch/util/safe_path.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::host {
namespace {

std::vector<std::string> glob_paths(const std::string& literal, const std::string& tail) {
  std::string pattern;
  for (char c : literal) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') pattern += '\\';
    pattern += c;
  }
  std::vector<std::string> out;
  glob_t g{};
  if (::glob((pattern + tail).c_str(), 0, nullptr, &g) == 0)
    for (size_t k = 0; k < g.gl_pathc; ++k) out.emplace_back(g.gl_pathv[k]);
  ::globfree(&g);
  return out;
}

std::string parent(const std::string& path) {
  auto at = path.find_last_of('/');
  return at == std::string::npos || at == 0 ? "/" : path.substr(0, at);
}

/// The base installation's prefixes: each `home` line's folder of pyvenv.cfg one level up,
/// as getpath finds it. The key is matched as Python matches it (case and spaces aside),
/// and every such line counts: which one a given Python takes is its own business. A
/// Python that is no venv is its own base.
std::vector<std::string> base_prefixes(const std::string& venv, const std::string& python) {
  std::vector<std::string> out;
  auto cfg = util::read_file(venv + "/pyvenv.cfg");
  if (cfg) {
    for (auto& raw : util::split(*cfg, '\n')) {
      auto eq = raw.find('=');
      if (eq == std::string::npos) continue;
      std::string key = util::trim(raw.substr(0, eq)), value = util::trim(raw.substr(eq + 1));
      for (auto& c : key) c = char(std::tolower(static_cast<unsigned char>(c)));
      if (key != "home" || value.empty()) continue;
      // A relative home is resolved against the venv, as getpath does with its folder.
      out.push_back(parent(value[0] == '/' ? value : venv + "/" + value));
    }
  }
  if (!out.empty()) return out;
  struct stat st;
  if (::stat(venv.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return {venv};
  char real[PATH_MAX];
  if (::realpath(python.c_str(), real)) return {parent(parent(real))};
  return {parent(parent(python))};
}

}  // namespace

std::vector<std::string> start_paths(const std::string& venv, const std::string& python) {
  std::vector<std::string> paths{venv, python};
  struct stat st;
  if (::lstat((venv + "/pyvenv.cfg").c_str(), &st) == 0) paths.push_back(venv + "/pyvenv.cfg");
  // The venv's own site-packages: its .pth files run at every start (the agent checks
  // them again, with every other site folder, before `site` runs).
  for (auto& p : glob_paths(venv, "/lib*/python*/site-packages")) paths.push_back(p);
  // The standard library is imported (encodings, codecs) before any code of ours runs:
  // its folder, lib-dynload and zip, for each version the venv was made for.
  for (auto& base : base_prefixes(venv, python)) {
    // Its interpreter's folder too: `home` names where the base executable lies.
    paths.push_back(base);
    std::vector<std::string> versions;
    for (auto& p : glob_paths(venv, "/lib/python3*")) versions.push_back(p.substr(p.find_last_of('/') + 1));
    for (auto& p : glob_paths(base, "/lib/python3.*")) versions.push_back(p.substr(p.find_last_of('/') + 1));
    for (auto& v : versions) {
      if (v.find('.') == std::string::npos || v.find("zip") != std::string::npos) continue;
      std::string zip = "python" + v.substr(6, v.find('.') - 6) + v.substr(v.find('.') + 1) + ".zip";
      for (auto& p : {base + "/lib/" + v, base + "/lib/" + v + "/lib-dynload", base + "/lib/" + zip})
        if (::lstat(p.c_str(), &st) == 0) paths.push_back(p);
    }
  }
  return paths;
}

void refuse_unsafe_python(const std::string& venv, const std::string& python) {
  for (auto& path : start_paths(venv, python))
    if (auto why = util::unsafe_path(path))
      throw Error("refusing to run " + python + ": " + *why +
                  ", who could make it run their code as you; run sitepatch as that user");
}

}  // namespace sitepatch::host
