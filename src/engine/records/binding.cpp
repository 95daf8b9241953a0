// Which environment a history describes. Records keep each file's site folder relative
// to the environment's prefix, so a copied or moved venv (container layers, `cp -a`,
// relocated images) carries a history that describes its own files. `<state>/environment`
// holds the prefix the history was last used with:
//  - the default state folder lives inside the prefix and moves with it: a new prefix
//    means a copy or a move, and the history follows (with a note);
//  - a --state-dir outside it is bound to one environment: another one is refused,
//    unless the recorded one no longer exists (it was moved), which rebinds it.
#include <spdlog/spdlog.h>

#include "engine/internal.hpp"
#include "engine/records/history_access.hpp"
#include "sitepatch/util/file.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine::detail {
namespace {

const char* kFile = "environment";

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::string bind_history(Session& s, bool writer) {
  std::string path = s.state_dir + "/" + kFile;
  std::string raw;
  if (s.mirror) {
    auto it = s.mirror->remote.find(kFile);
    if (it != s.mirror->remote.end()) raw = it->second;
  } else {
    auto f = s.host.read({path});
    if (!f.empty() && f[0].exists) raw = f[0].content;
  }
  std::string recorded = trimmed(raw);
  if (recorded == s.env.prefix) return recorded;
  bool inside_prefix = util::inside(s.state_dir, s.env.prefix);
  if (!recorded.empty()) {
    auto real = s.host.realpath({recorded, s.env.prefix});
    // One folder by two names (a symlinked .venv run as .venv/bin/python one time and by
    // its target the next): nothing moved, nothing to say or rewrite.
    if (real[0] && real[1] && *real[0] == *real[1]) return recorded;
    if (real[0] && !inside_prefix)
      throw Error("the history in " + s.state_dir + " belongs to the environment at " + recorded + ", not to " +
                  s.env.prefix + ": give each environment its own --state-dir");
  }
  if (!recorded.empty() && s.warned.insert("moved " + s.state_dir).second) {
    std::string how = inside_prefix ? "the environment was copied or moved" : recorded + " no longer exists";
    spdlog::warn("the history in {} was recorded for {}; {}: it now describes {}", s.state_dir, recorded, how,
                 s.env.prefix);
  }
  if (writer) {
    std::string text = s.env.prefix + "\n";
    s.host.write({{path, text, raw.empty() ? "" : util::sha256_hex(raw), s.state_dir}});
    if (s.mirror) {
      // The local copy agrees with the remote, or the next publish would undo this.
      util::AtomicFile copy(s.mirror->dir + "/" + kFile);
      copy.write(text);
      copy.commit();
      s.mirror->remote[kFile] = text;
    }
  }
  return recorded.empty() ? s.env.prefix : recorded;
}

std::string stored_site_dir(const Session& s, const std::string& site_dir) {
  if (util::inside(site_dir, s.env.prefix) && site_dir != s.env.prefix)
    return site_dir.substr(s.env.prefix.size() + 1);
  return site_dir;  // outside the environment (a system folder): kept as it is
}

std::string live_site_dir(const Session& s, const std::string& stored, const std::string& recorded_prefix) {
  if (stored.empty()) return stored;
  if (stored[0] != '/') return s.env.prefix + "/" + stored;
  // Records from before relative folders: absolute, under the prefix they were made in.
  for (auto& d : s.env.site_dirs)
    if (d == stored) return stored;
  if (!recorded_prefix.empty() && recorded_prefix != s.env.prefix && util::inside(stored, recorded_prefix))
    return s.env.prefix + stored.substr(recorded_prefix.size());
  return stored;
}

}  // namespace sitepatch::engine::detail
