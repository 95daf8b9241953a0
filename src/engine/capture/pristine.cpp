// edit: pip's bytes of a distribution's Python sources go into the history before
// anyone edits them (pristine/<name>/<version>/<rel>), so capture finds its originals
// without a wheel; with a copy, the distribution's files are also put in a folder of this
// machine to edit there (capture --from reads them back).
#include <filesystem>

#include "engine/capture/capture_impl.hpp"
#include "engine/internal.hpp"
#include "engine/records/history_access.hpp"
#include "sitepatch/util/file.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/safe_path.hpp"
#include "sitepatch/util/strings.hpp"

namespace fs = std::filesystem;

namespace sitepatch::engine {
namespace {

// The folders a distribution's modules are in: the first part of each file's path.
std::vector<std::string> folders_of(const std::vector<detail::DistFile>& files) {
  std::vector<std::string> out;
  for (auto& f : files) {
    std::string top = f.rel.substr(0, f.rel.find('/'));
    std::string where = f.path.substr(0, f.path.size() - f.rel.size()) + top;  // its own site folder
    if (std::find(out.begin(), out.end(), where) == out.end()) out.push_back(where);
  }
  return out;
}

// Writes `files` under `dir` (made if missing; an existing file is replaced): a plain
// copy on this machine for the user to edit.
// The folder a copy goes to: new or empty (a copy never replaces edits made there), and
// no other user can change it, so what is made below it is ours alone.
void check_copy_folder(const std::string& dir, bool make) {
  std::error_code ec;
  if (fs::exists(fs::symlink_status(dir, ec)) && !(fs::is_directory(dir, ec) && fs::is_empty(dir, ec)))
    throw Error("--copy " + dir + " exists and is not an empty folder: copy into a new one (the files there would be "
                "replaced)");
  // Judged before anything is made in it; then made, and judged again.
  auto why = util::unsafe_path(dir);
  if (!why && make) why = util::make_safe_folder(dir);
  if (why) throw Error("--copy " + dir + ": " + *why + "; give a folder only you can change");
}

void copy_to(const std::string& dir, const std::vector<detail::DistFile>& files) {
  std::error_code ec;
  for (auto& f : files) {
    fs::path to = fs::path(dir) / f.rel;
    fs::create_directories(to.parent_path(), ec);
    if (ec) throw Error(to.parent_path().string() + ": " + ec.message());
    util::AtomicFile out(to.string());
    out.write(f.text);
    out.commit_unsynced();  // a working copy: no fsync per file
  }
}

// Each patched file's bytes before the first patch on it (path -> text): in a chain of
// records on one file, the before that is no other record's after.
std::map<std::string, std::string> pip_bytes_of_patched(const std::vector<store::PatchRecord>& records) {
  std::map<std::string, std::vector<const store::FileRecord*>> chains;
  for (auto& r : records)
    for (auto& f : r.files) chains[f.site_dir + "/" + f.rel].push_back(&f);
  std::map<std::string, std::string> out;
  for (auto& [path, chain] : chains)
    for (auto* f : chain)
      if (std::none_of(chain.begin(), chain.end(), [&](auto* g) { return g != f && g->after == f->before; }))
        out[path] = f->before;
  return out;
}

}  // namespace

SavedDistribution save_pristine(Session& s, const std::string& dist, const std::string& copy, bool dry_run) {
  SavedDistribution res;
  const site::Distribution& d = detail::distribution_named(s, dist);
  res.dist = d.name;
  res.version = d.version;
  if (!copy.empty()) check_copy_folder(copy, false);  // before anything is read or made
  std::unique_ptr<host::Lock> lock =
      dry_run ? detail::read_lock(s) : s.host.lock(detail::lock_path(s), s.lock_timeout_ms);
  std::vector<store::PatchRecord> existing;
  std::unique_ptr<detail::HistoryAccess> history;
  if (dry_run) {
    history = detail::HistoryAccess::open(s, false);
    if (history) existing = history->patches();
  } else {
    history = detail::open_cleaned(s, *lock, existing, res.notes, nullptr);
  }
  auto before = pip_bytes_of_patched(existing);

  // Every file as pip wrote it, or nothing is saved: a file already edited has no
  // original here, and saving it would make the edit look like pip's.
  // Only the sources: a recipe edits .py files, and torch's libraries are gigabytes.
  std::vector<detail::DistFile> python;
  for (auto& f : detail::hashed_files(s, d))
    if (util::ends_with(f.rel, ".py")) python.push_back(std::move(f));
  std::vector<std::string> paths;
  for (auto& f : python) paths.push_back(f.path);
  auto now = s.host.read(paths);
  std::vector<std::string> edited;
  for (size_t i = 0; i < python.size(); ++i) {
    python[i].text = std::move(now[i].content);
    if (!now[i].exists || !detail::installed_bytes(python[i], python[i].text)) edited.push_back(python[i].rel);
  }
  if (!edited.empty())
    throw Error(util::join(edited, ", ") + " of " + d.name + " " + d.version +
                " already differ from pip's bytes (RECORD): capture them with --original WHEEL|DIR instead, or "
                "reinstall and run edit again; nothing was saved");
  res.folders = folders_of(python);
  res.files = python.size();
  if (!copy.empty() && !dry_run) {
    check_copy_folder(copy, true);
    copy_to(copy, python);  // the sources: what a recipe can change
    res.copy = fs::absolute(copy).lexically_normal().string();
    res.copied = python.size();
  }
  if (dry_run) return res;

  if (!history) history = detail::HistoryAccess::open(s, true, true);
  store::Transaction tx;
  tx.message = "edit " + d.name + "==" + d.version + ": pip's bytes of " + std::to_string(python.size()) +
               " Python file(s) saved";
  tx.trailers.emplace_back("Sitepatch-Distribution", d.name + "==" + d.version);
  tx.pristine_drop.push_back(site::normalize_name(d.name));  // an older version's copy goes
  for (auto& f : python) {
    // A file a patch holds: RECORD follows the patched bytes; pip's are its record's before.
    auto it = before.find(f.path);
    tx.pristine[detail::pristine_key(d) + "/" + f.rel] = it == before.end() ? f.text : it->second;
  }
  res.commit = history->commit(tx);
  return res;
}

}  // namespace sitepatch::engine
