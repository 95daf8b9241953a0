// pip's bytes of files a user edited, each checked against RECORD's sha256: whatever
// the source, a byte that is not pip's is never taken for an original. Sources: what
// the user gave (a wheel or an unpacked tree of that version); the history's copy
// (`sitepatch edit`); uv's unpacked archives and pip's wheels, on this machine.
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <set>

#include "engine/capture/capture_impl.hpp"
#include "engine/records/history_access.hpp"
#include "sitepatch/util/file.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/safe_path.hpp"
#include "sitepatch/util/strings.hpp"
#include "sitepatch/site/wheel.hpp"
#include "sitepatch/util/zip.hpp"

#include <spdlog/spdlog.h>

namespace fs = std::filesystem;

namespace sitepatch::engine::detail {
namespace {

// A source of candidate bytes for rels: fills what it has into `out`.
using Source = std::function<void(const std::vector<const DistFile*>&, std::map<std::string, std::string>&)>;

Source tree_source(const std::string& dir) {
  return [dir](const std::vector<const DistFile*>& want, std::map<std::string, std::string>& out) {
    for (auto* f : want)
      if (auto text = util::read_file(dir + "/" + f->rel)) out[f->rel] = std::move(*text);
  };
}

Source wheel_source(const std::string& wheel) {
  return [wheel](const std::vector<const DistFile*>& want, std::map<std::string, std::string>& out) {
    std::set<std::string> rels;
    for (auto* f : want) rels.insert(f->rel);
    auto members = util::read_zip(wheel, [&](const std::string& m) { return rels.count(site::installed_rel(m)) > 0; });
    if (!members) throw Error(members.error());
    for (auto& [m, text] : *members) out[site::installed_rel(m)] = std::move(text);
  };
}

// The names and versions a wheel or a tree says it holds (each .dist-info/METADATA).
std::vector<std::string> says(const std::string& given, bool wheel) {
  std::vector<std::string> metas;
  if (wheel) {
    auto m = util::read_zip(given, [](const std::string& n) {
      return util::ends_with(n, ".dist-info/METADATA") && std::count(n.begin(), n.end(), '/') == 1;
    });
    if (!m) throw Error(m.error());
    for (auto& [n, text] : *m) metas.push_back(text);
  } else {
    std::error_code ec;
    for (auto& e : fs::directory_iterator(given, ec))
      if (util::ends_with(e.path().filename().string(), ".dist-info"))
        if (auto t = util::read_file(e.path().string() + "/METADATA")) metas.push_back(*t);
  }
  std::vector<std::string> out;
  for (auto& meta : metas) {
    auto [name, version] = site::parse_metadata(meta);
    out.push_back(name + " " + version);
  }
  return out;
}

// Cache folders of this machine's user, as uv and pip find them; one another user could
// change is skipped (its bytes are checked, but its names would steer what is read).
std::vector<std::string> cache_roots(const char* env_var, const char* tool) {
  std::vector<std::string> out;
  if (const char* v = std::getenv(env_var); v && *v) out.push_back(v);
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) out.push_back(std::string(x) + "/" + tool);
  if (const char* h = std::getenv("HOME"); h && *h) out.push_back(std::string(h) + "/.cache/" + tool);
  std::vector<std::string> safe;
  std::error_code ec;
  for (auto& r : out)
    if (fs::is_directory(r, ec) && !util::unsafe_path(r) && std::find(safe.begin(), safe.end(), r) == safe.end())
      safe.push_back(r);
  return safe;
}

// uv keeps each wheel it installed unpacked: <cache>/archive-v0/<id>/ with its .dist-info.
std::vector<std::pair<std::string, Source>> uv_sources(const site::Distribution& d) {
  std::vector<std::pair<std::string, Source>> out;
  std::error_code ec;
  for (auto& root : cache_roots("UV_CACHE_DIR", "uv"))
    for (auto& e : fs::directory_iterator(root + "/archive-v0", ec))
      if (fs::is_directory(e.path() / d.dist_info, ec))
        out.push_back({"uv's cache " + e.path().string(), tree_source(e.path().string())});
  return out;
}

// pip keeps the wheels it built (<cache>/wheels/.../<name>-<version>-<tags>.whl) and the
// ones it downloaded, as HTTP bodies (<cache>/http-v2/.../*.body, a zip each).
std::vector<std::pair<std::string, Source>> pip_sources(const site::Distribution& d) {
  std::vector<std::pair<std::string, Source>> out;
  std::string stem = d.dist_info.substr(0, d.dist_info.size() - std::string(".dist-info").size());
  std::string record = d.dist_info + "/RECORD";
  std::error_code ec;
  for (auto& root : cache_roots("PIP_CACHE_DIR", "pip")) {
    for (const char* sub : {"/wheels", "/http-v2"}) {
      size_t looked = 0;
      for (auto it = fs::recursive_directory_iterator(root + sub, fs::directory_options::skip_permission_denied, ec);
           !ec && it != fs::recursive_directory_iterator() && looked < 20000; it.increment(ec), ++looked) {
        if (!it->is_regular_file(ec)) continue;
        std::string name = it->path().filename().string();
        std::string path = it->path().string();
        if (util::ends_with(name, ".whl") && name.rfind(stem + "-", 0) == 0) {
          out.push_back({"pip's cache " + path, wheel_source(path)});
        } else if (util::ends_with(name, ".body")) {
          auto m = util::read_zip(path, [&](const std::string& n) { return n == record; });
          if (m && !m->empty()) out.push_back({"pip's cache " + path, wheel_source(path)});
        }
      }
    }
  }
  return out;
}

}  // namespace

std::string pristine_key(const site::Distribution& d) { return site::normalize_name(d.name) + "/" + d.version; }

std::map<std::string, Original> find_originals(Session& s, HistoryAccess* history, const site::Distribution& d,
                                               const std::vector<DistFile>& files, const std::string& given) {
  std::map<std::string, Original> out;
  auto take = [&](const std::string& from, const Source& source) {
    std::vector<const DistFile*> want;
    for (auto& f : files)
      if (!out.count(f.rel)) want.push_back(&f);
    if (want.empty()) return;
    std::map<std::string, std::string> got;
    if (given.empty()) {
      // A cache's broken or foreign file is passed over: another source may hold the bytes.
      try {
        source(want, got);
      } catch (const Error& e) {
        spdlog::info("capture: {} passed over: {}", from, e.what());
      }
    } else {
      source(want, got);
    }
    for (auto* f : want)
      if (auto it = got.find(f->rel); it != got.end() && installed_bytes(*f, it->second)) out[f->rel] = {it->second, from};
  };

  if (!given.empty()) {
    std::error_code ec;
    bool dir = fs::is_directory(given, ec);
    if (!dir && !fs::is_regular_file(given, ec)) throw Error("--original " + given + ": no such wheel or folder");
    std::vector<std::string> held = says(given, !dir);
    std::string want = d.name + " " + d.version;
    bool holds = held.empty() || std::any_of(held.begin(), held.end(), [&](const std::string& w) {
      return site::normalize_name(w.substr(0, w.find(' '))) + w.substr(w.find(' ')) ==
             site::normalize_name(d.name) + " " + d.version;
    });
    if (!holds) throw Error("--original " + given + " is " + util::join(held, ", ") + ", not " + want + " (the version installed)");
    std::string what = held.empty() ? "" : want;
    take((dir ? "folder " : "wheel ") + given, dir ? tree_source(given) : wheel_source(given));
    std::vector<std::string> wrong;
    for (auto& f : files)
      if (!out.count(f.rel)) wrong.push_back(f.rel);
    if (!wrong.empty())
      throw Error("--original " + given + " does not hold pip's bytes of " + util::join(wrong, ", ") + " (" + want +
                  "'s RECORD gives another sha256" + (what.empty() ? "" : ", or the file is missing") +
                  "): give the wheel or the unpacked tree of exactly " + want);
    return out;
  }
  if (history) {
    take("the history (sitepatch edit)", [&](const std::vector<const DistFile*>& want, std::map<std::string, std::string>& got) {
      for (auto* f : want)
        if (auto t = history->pristine_file(pristine_key(d) + "/" + f->rel)) got[f->rel] = std::move(*t);
    });
  }
  {
    // This machine's caches, whichever machine the environment is on: their bytes count
    // only where RECORD's hash says they are pip's.
    auto missing = [&] { return out.size() < files.size(); };
    for (auto& [from, source] : uv_sources(d))
      if (missing()) take(from, source);
    if (missing())
      for (auto& [from, source] : pip_sources(d))
        if (missing()) take(from, source);
  }
  if (history)
    // Last: an earlier apply saved the file's original before writing it, and RECORD's
    // hash says which of the texts the history ever held is pip's (walking it costs more
    // than a cache lookup).
    for (auto& f : files) {
      if (out.count(f.rel)) continue;
      for (auto& text : history->site_file_versions(f.rel))
        if (installed_bytes(f, text)) {
          out[f.rel] = {text, "the history (an earlier apply saved it)"};
          break;
        }
    }
  std::vector<std::string> none;
  for (auto& f : files)
    if (!out.count(f.rel)) none.push_back(f.rel);
  if (!none.empty())
    throw Error("pip's bytes of " + util::join(none, ", ") + " (" + d.name + " " + d.version +
                ") are nowhere sitepatch can find them (the history, uv's or pip's cache" +
                std::string(s.host.local() ? "" : " on this machine") + "): give --original WHEEL|DIR of " + d.name +
                "==" + d.version + " (pip download --no-deps " + d.name + "==" + d.version +
                " gets the wheel); next time, run `sitepatch edit " + d.name + "` before editing");
  return out;
}

}  // namespace sitepatch::engine::detail
