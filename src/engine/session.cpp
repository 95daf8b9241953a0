#include "sitepatch/host/distribution_index.hpp"
#include "sitepatch/site/distribution.hpp"

#include <spdlog/spdlog.h>

#include "engine/internal.hpp"
#include "engine/records/history_access.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {

Session Session::open(host::Host& host, const std::string& venv, const std::string& state_dir) {
  site::Environment env = host.probe(venv);
  std::string dir = state_dir.empty() ? site::default_state_dir(env.prefix) : state_dir;
  spdlog::info("environment on {}: Python {} ({}), prefix {}, site-packages {}; history {}", host.name(),
               env.version, env.python, env.prefix, util::join(env.site_dirs, ", "), dir);
  return Session(host, std::move(env), std::move(dir));
}

const host::DistributionIndex& Session::distributions() {
  if (!dists_)
    dists_ = std::make_shared<host::DistributionIndex>(host::load_distributions(host, env.site_dirs, env.prefix));
  return *dists_;
}

bool Plan::ok() const {
  if (!problems.empty()) return false;
  for (auto& e : edits)
    if (e.state == EditState::failed) return false;
  return true;
}

std::string_view state_name(EditState s) {
  switch (s) {
    case EditState::will_apply: return "will apply";
    case EditState::already_applied: return "already applied";
    case EditState::skipped: return "skipped";
    case EditState::failed: return "fails";
  }
  return "?";
}

std::string_view state_name(FileState s) {
  switch (s) {
    case FileState::applied: return "applied";
    case FileState::reverted: return "reverted";
    case FileState::modified: return "modified";
    case FileState::replaced: return "replaced";
    case FileState::missing: return "missing";
  }
  return "?";
}

namespace detail {

std::string lock_path(const Session& s) { return s.state_dir + "/sitepatch.lock"; }

std::string fix_command(const Session& s, const std::string& command) {
  return (s.invocation.empty() ? "sitepatch --venv " + s.env.prefix : s.invocation) + " " + command;
}

std::unique_ptr<host::Lock> read_lock(Session& s) {
  return s.host.lock(lock_path(s), s.lock_timeout_ms, host::LockMode::shared);
}

std::pair<std::string, std::string> split_path(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

std::string dist_label(const std::string& dist, const std::string& version) {
  if (dist.empty()) return "";
  return dist + "==" + version;
}

std::vector<std::string> bytecode_dirs(const std::vector<std::string>& sources) {
  std::vector<std::string> caches;
  for (auto& src : sources) {
    auto [dir, base] = split_path(src);
    if (util::ends_with(base, ".py")) caches.push_back(dir + "/__pycache__");
  }
  return caches;
}

std::vector<std::string> remove_bytecode(host::Host& host, const std::vector<std::string>& sources) {
  std::vector<std::string> doomed, stems;
  auto caches = bytecode_dirs(sources);
  for (auto& src : sources) {
    auto base = split_path(src).second;
    if (util::ends_with(base, ".py")) stems.push_back(base.substr(0, base.size() - 3));
  }
  auto listings = host.list_many(caches);  // one round trip however many folders
  for (size_t i = 0; i < caches.size(); ++i)
    for (auto& e : listings[i])
      if (!e.is_dir && site::is_pyc_of(e.name, stems[i])) doomed.push_back(caches[i] + "/" + e.name);
  if (!doomed.empty()) host.remove(doomed);
  return doomed;
}

}  // namespace detail
}  // namespace sitepatch::engine
