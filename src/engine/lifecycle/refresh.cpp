// refresh: a hand change on top of an applied patch folded back into its recipe
// (refresh.hpp). The new edits are capture's (python::capture from each file's bytes
// before the patch to its bytes now); the header of the recipe (id, description,
// requires, comments) is kept as written.
#include "sitepatch/engine/refresh.hpp"

#include <algorithm>
#include <ctime>
#include <map>

#include "engine/capture/capture_impl.hpp"
#include "engine/internal.hpp"
#include "engine/records/history_access.hpp"
#include "engine/records/records.hpp"
#include "sitepatch/host/overlay.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {
namespace {

// The recipe's text with its `edits:` block replaced by `edits`: every other line (the
// id, description, requires, comments, keys after the block) as the user wrote it.
std::string with_edits(const std::string& text, const std::vector<recipe::Edit>& edits) {
  std::vector<std::string> lines = util::split(text, '\n');
  std::string head, tail;
  bool in_edits = false, seen = false;
  for (const std::string& line : lines) {
    bool top_key = !line.empty() && line[0] != ' ' && line[0] != '#' && line[0] != '-' &&
                   line.find(':') != std::string::npos;
    if (top_key) in_edits = util::starts_with(line, "edits:");
    if (in_edits) {
      seen = true;
      continue;
    }
    (seen ? tail : head) += line + "\n";
  }
  while (util::ends_with(head, "\n\n")) head.pop_back();
  while (util::ends_with(tail, "\n\n")) tail.pop_back();
  std::string out = head + "edits:\n";
  for (auto& e : edits) out += recipe::edit_yaml(e);
  if (!util::trim(tail).empty()) out += tail;
  return out;
}

std::string refusal(Session& s, const store::PatchRecord& r, const PatchStatus& ps,
                    const std::vector<store::PatchRecord>& records) {
  if (r.state != "applied")
    return "its last apply did not finish (" + r.state + "): " + detail::fix_command(s, "rollback " + r.id) +
           " undoes it";
  // A hand change may rewrite the patched definitions themselves (verify: "the edit is
  // gone"); only a new version under the files is no hand change to fold in.
  for (auto& f : ps.files) {
    if (f.uninstalled || f.state == FileState::missing)
      return f.rel + " is not there: " + detail::fix_command(s, "rollback " + r.id) + " forgets the record";
    if (!f.upgrade.empty())
      return f.upgrade + ": that is an upgrade, not a hand change: " + detail::fix_command(s, "reapply " + r.id) +
             " first";
  }
  for (auto& other : records)
    if (other.id != r.id)
      for (auto& f : other.files)
        for (auto& mine : r.files)
          if (f.site_dir == mine.site_dir && f.rel == mine.rel)
            return other.id + " also patches " + f.rel + ": its edits would become " + r.id + "'s";
  if (r.recipe_text.empty()) return "the history keeps no recipe for it (applied by an older sitepatch)";
  return "";
}

// Each file of the patch, as pip left it and as it is now, by path.
struct Texts {
  std::map<std::string, std::string> before, now;
};

// 1. The edits from pip's bytes (each file's `before`) to the bytes now, as capture makes them.
std::vector<recipe::Edit> captured(const store::PatchRecord& r, const Texts& t, RefreshResult& res) {
  std::vector<recipe::Edit> edits;
  for (auto& f : r.files) {
    std::string path = f.site_dir + "/" + f.rel;
    CapturedFile cf;
    auto mine = detail::file_edits(t.before.at(path), t.now.at(path), f.rel, false, cf);
    edits.insert(edits.end(), std::make_move_iterator(mine.begin()), std::make_move_iterator(mine.end()));
    res.files.push_back({f.rel, cf.edits, cf.outside, cf.whole});
  }
  return edits;
}

// 2. The new recipe planned on pip's bytes must give today's files (but for what no edit
// names); the plan, its results set to those files, is what the record is made from.
Plan checked_on_pip_bytes(Session& s, const RefreshResult& res, const Texts& t,
                          const std::vector<store::PatchRecord>& others) {
  recipe::Recipe rec = recipe::parse(res.new_recipe, "history:" + res.id + "/recipe.yaml");
  auto view = host::overlay_host(s.host, t.before);
  Session seen(*view, s.env, s.state_dir);
  Plan p = detail::plan_against(seen, {rec}, others);
  if (!p.ok()) throw Error("the refreshed recipe does not apply to pip's bytes (a sitepatch bug; please report it)");
  for (auto& fc : p.files) {
    auto rf = std::find_if(res.files.begin(), res.files.end(), [&](auto& x) { return x.rel == fc.rel; });
    bool outside = rf != res.files.end() && !rf->outside.empty();
    const std::string& now = t.now.at(fc.path);
    if (!outside && fc.new_text != now)
      throw Error("the refreshed recipe does not give " + fc.rel + " back as it is now (a sitepatch bug)");
    fc.new_text = now;
    fc.steps = {{res.id, now}};
  }
  return p;
}

// The files whose recorded bytes move to today's (pip's RECORD rows follow them).
std::vector<FileChange> changed_files(const store::PatchRecord& r, const Texts& t) {
  std::vector<FileChange> out;
  for (auto& f : r.files) {
    std::string path = f.site_dir + "/" + f.rel;
    const std::string& now = t.now.at(path);
    if (now == f.after) continue;
    FileChange fc;
    fc.rel = f.rel;
    fc.site_dir = f.site_dir;
    fc.path = path;
    fc.old_text = f.after;
    fc.new_text = now;
    fc.dist = f.dist;
    fc.version = f.version;
    fc.diff = store::unified_diff(fc.old_text, fc.new_text, f.rel);
    out.push_back(std::move(fc));
  }
  return out;
}

// 3. Recorded: the new recipe, and its files as they are now (rollback still gives pip's
// bytes); pip's and conda's rows first, as adopt writes them.
void record(Session& s, detail::HistoryAccess& history, const store::PatchRecord& r, const Plan& p,
            const std::vector<store::PatchRecord>& records, const std::vector<store::PatchRecord>& others,
            RefreshResult& res) {
  auto made = detail::records_for(p, others, s.distributions(), "applied", std::time(nullptr));
  auto it = std::find_if(made.begin(), made.end(), [&](auto& m) { return m.id == r.id; });
  if (it == made.end()) throw Error("the refreshed recipe changes no file of " + r.id + " (a sitepatch bug)");
  store::PatchRecord fresh = *it;
  for (auto& f : fresh.files) {
    auto old = std::find_if(r.files.begin(), r.files.end(), [&](auto& o) { return o.rel == f.rel; });
    if (old != r.files.end()) f.before = old->before;  // pip's bytes, whatever the overlay said
  }
  store::Transaction tx;
  tx.message = "refresh " + r.id + ": its recipe from the files as they are now";
  tx.put.push_back(fresh);
  tx.trailers = detail::trailers_for(tx.put);
  for (auto& f : fresh.files) tx.site[f.rel] = f.after;
  tx.site_drop = detail::unreferenced(records, tx.put);
  auto rows = detail::record_updates(s, res.changed);
  auto hashes = detail::conda_updates(s, res.changed);
  rows.insert(rows.end(), hashes.begin(), hashes.end());
  if (!rows.empty()) s.host.write(rows);
  res.commit = history.commit(tx);
  res.written = true;
}

}  // namespace

RefreshResult refresh(Session& s, const std::string& id, bool dry_run, const RecipeTarget& target) {
  RefreshResult res;
  res.id = id;
  std::unique_ptr<host::Lock> lock =
      dry_run ? detail::read_lock(s) : s.host.lock(detail::lock_path(s), s.lock_timeout_ms);
  auto history = detail::HistoryAccess::open(s, false, !dry_run);
  if (!history) throw Error("nothing was ever applied to " + s.env.prefix + " (no history at " + s.state_dir + ")");
  auto records = history->patches();
  store::PatchRecord r = detail::select(records, {id}).front();
  res.recipe_path = r.recipe_path;
  res.old_recipe = r.recipe_text;
  std::map<std::string, host::FileData> now;
  PatchStatus ps = detail::statuses_of(s, *history, records, {r}, now).front();
  if (auto why = refusal(s, r, ps, records); !why.empty())
    throw Error("cannot refresh " + id + ": " + why + "; nothing was written");
  if (std::all_of(ps.files.begin(), ps.files.end(), [](auto& f) { return f.state == FileState::applied; }))
    return res;  // as the recipe leaves them: nothing to fold in

  Texts t;
  for (auto& f : r.files) {
    std::string path = f.site_dir + "/" + f.rel;
    t.before[path] = f.before;
    t.now[path] = now.at(path).content;
  }
  std::vector<recipe::Edit> edits = captured(r, t, res);
  if (edits.empty()) throw Error("cannot refresh " + id + ": its files now hold no change a recipe can name; nothing was written");
  res.new_recipe = with_edits(r.recipe_text, edits);
  recipe::check_written(res.new_recipe, id, edits, "the recipe refresh writes");
  std::vector<store::PatchRecord> others;
  for (auto& o : records)
    if (o.id != id) others.push_back(o);
  Plan p = checked_on_pip_bytes(s, res, t, others);
  res.changed = changed_files(r, t);
  if (dry_run) return res;
  std::string origin = target ? target(res) : "";
  p.recipes.front().origin = origin.empty() ? r.recipe_path : origin;  // what records_for names
  record(s, *history, r, p, records, others, res);
  return res;
}

}  // namespace sitepatch::engine
