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

  // 1. The edits from pip's bytes (each file's `before`) to the bytes now.
  std::vector<recipe::Edit> edits;
  std::map<std::string, std::string> before_of, now_of;
  for (auto& f : r.files) {
    std::string path = f.site_dir + "/" + f.rel;
    const std::string& text = now.at(path).content;
    before_of[path] = f.before;
    now_of[path] = text;
    RefreshedFile rf;
    rf.rel = f.rel;
    python::Capture c = python::capture(f.before, text, f.rel, false);
    if (c.edits.empty() && !c.outside.empty()) {
      c = python::capture(f.before, text, f.rel, true);
      rf.whole = true;
    }
    rf.edits = c.edits.size();
    rf.outside = c.outside;
    std::string module = detail::module_of(f.rel);
    for (auto& e : c.edits) {
      if (module.empty()) e.file = f.rel;
      else e.module = module;
      edits.push_back(std::move(e));
    }
    res.files.push_back(std::move(rf));
  }
  if (edits.empty()) throw Error("cannot refresh " + id + ": its files now hold no change a recipe can name; nothing was written");
  res.new_recipe = with_edits(r.recipe_text, edits);
  recipe::check_written(res.new_recipe, id, edits, "the recipe refresh writes");

  // 2. Checked: planned on pip's bytes, it gives today's files (but for what no edit names).
  recipe::Recipe rec = recipe::parse(res.new_recipe, "history:" + id + "/recipe.yaml");
  auto view = host::overlay_host(s.host, before_of);
  Session seen(*view, s.env, s.state_dir);
  std::vector<store::PatchRecord> others;
  for (auto& o : records)
    if (o.id != id) others.push_back(o);
  Plan p = detail::plan_against(seen, {rec}, others);
  if (!p.ok()) throw Error("the refreshed recipe does not apply to pip's bytes (a sitepatch bug; please report it)");
  for (auto& fc : p.files) {
    auto rf = std::find_if(res.files.begin(), res.files.end(), [&](auto& x) { return x.rel == fc.rel; });
    bool outside = rf != res.files.end() && !rf->outside.empty();
    if (!outside && fc.new_text != now_of[fc.path])
      throw Error("the refreshed recipe does not give " + fc.rel + " back as it is now (a sitepatch bug)");
    fc.new_text = now_of[fc.path];
    fc.steps = {{id, fc.new_text}};
  }
  for (auto& f : r.files) {
    std::string path = f.site_dir + "/" + f.rel;
    if (now_of[path] == f.after) continue;
    FileChange fc;
    fc.rel = f.rel;
    fc.site_dir = f.site_dir;
    fc.path = path;
    fc.old_text = f.after;
    fc.new_text = now_of[path];
    fc.dist = f.dist;
    fc.version = f.version;
    fc.diff = store::unified_diff(fc.old_text, fc.new_text, f.rel);
    res.changed.push_back(std::move(fc));
  }
  if (dry_run) return res;
  std::string origin = target ? target(res) : "";
  p.recipes.front().origin = origin.empty() ? r.recipe_path : origin;  // what records_for names

  // 3. Recorded: the new recipe, and its files as they are now; rollback still gives pip's bytes.
  auto made = detail::records_for(p, others, s.distributions(), "applied", std::time(nullptr));
  auto it = std::find_if(made.begin(), made.end(), [&](auto& m) { return m.id == id; });
  if (it == made.end()) throw Error("the refreshed recipe changes no file of " + id + " (a sitepatch bug)");
  store::PatchRecord fresh = *it;
  for (auto& f : fresh.files) {
    auto old = std::find_if(r.files.begin(), r.files.end(), [&](auto& o) { return o.rel == f.rel; });
    if (old != r.files.end()) f.before = old->before;  // pip's bytes, whatever the overlay said
  }
  store::Transaction tx;
  tx.message = "refresh " + id + ": its recipe from the files as they are now";
  tx.put.push_back(fresh);
  tx.trailers = detail::trailers_for(tx.put);
  for (auto& f : fresh.files) tx.site[f.rel] = f.after;
  tx.site_drop = detail::unreferenced(records, tx.put);
  auto rows = detail::record_updates(s, res.changed);
  auto hashes = detail::conda_updates(s, res.changed);
  rows.insert(rows.end(), hashes.begin(), hashes.end());
  if (!rows.empty()) s.host.write(rows);
  res.commit = history->commit(tx);
  res.written = true;
  return res;
}

}  // namespace sitepatch::engine
