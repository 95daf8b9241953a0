#include "engine/records/records.hpp"

#include <algorithm>
#include <set>

#include "engine/records/file_state.hpp"
#include "sitepatch/host/distribution_index.hpp"
#include "sitepatch/util/hash.hpp"

#include "engine/internal.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine::detail {

namespace {

// One record per edit of `rec`'s recipe that is in the files now, in recipe order:
// new ones from this plan; an edit found already applied keeps what it had.
std::vector<store::EditRecord> edit_records(const Plan& plan, const std::string& id,
                                            const std::vector<store::EditRecord>& old) {
  std::map<std::string, const FileChange*> change_of;
  for (auto& fc : plan.files) change_of[fc.rel] = &fc;
  std::vector<store::EditRecord> out;
  std::map<std::string, int> seen;  // edits sharing a `where` (module-level ones) pair up in order
  for (const EditStatus& st : plan.edits) {
    if (st.recipe_id != id || st.file.empty()) continue;
    if (st.state != EditState::will_apply && st.state != EditState::already_applied) continue;
    const store::EditRecord* kept = nullptr;
    int nth = seen[st.where]++;
    for (auto& e : old)
      if (e.where == st.where && nth-- == 0) kept = &e;
    auto fc = change_of.find(st.file);
    if (st.state == EditState::already_applied || fc == change_of.end()) {
      if (kept) out.push_back(*kept);
      continue;
    }
    store::EditRecord er;
    er.where = st.where;
    er.rel = st.file;
    er.module = st.module;
    er.dist = fc->second->dist;
    er.version = fc->second->version;
    std::string prev = fc->second->old_text;
    for (auto& [step_id, after] : fc->second->steps) {
      if (step_id == id) {
        er.before_sha = util::sha256_hex(prev);
        er.after_sha = util::sha256_hex(after);
      }
      prev = after;
    }
    er.original = st.original;
    er.fingerprint = st.original.empty() ? "" : util::sha256_hex(st.original);
    out.push_back(std::move(er));
  }
  return out;
}

// What a recipe re-applied to a file found once its own earlier edit (`was`) is taken
// out of `found`: the file as it would be without this recipe. Not simply `was.before`:
// after a reinstall the file no longer holds that edit, and the recipe now starts from
// pip's bytes (or from another recipe reapplied before it); keeping the old original
// would make a later rollback put the other recipe's edit back.
std::string original_under(const store::FileRecord& was, const std::string& found) {
  if (found == was.after) return was.before;
  if (found == was.before) return found;
  auto m = undo_edit(was.after, found, was.before, was.rel);
  return m.clean ? m.content : found;
}

}  // namespace

recipe::Recipe recorded_recipe(const store::PatchRecord& r, const std::string& path) {
  recipe::Recipe rec = recipe::parse(r.recipe_text, path);
  if (!rec.replace_indent_given && r.replace_indent == "absolute")
    recipe::set_replace_indent(rec, recipe::ReplaceIndent::absolute);
  return rec;
}

std::vector<store::PatchRecord> records_for(const Plan& plan,
                                            const std::vector<store::PatchRecord>& existing,
                                            const host::DistributionIndex& dists,
                                            const std::string& state, int64_t now) {
  std::map<std::string, const store::PatchRecord*> before;
  for (auto& r : existing) before[r.id] = &r;
  std::map<std::string, store::PatchRecord> out;
  std::vector<std::string> order;
  for (auto& fc : plan.files) {
    std::string prev = fc.old_text;
    for (auto& [id, after] : fc.steps) {
      auto it = out.find(id);
      if (it == out.end()) {
        store::PatchRecord rec;
        for (auto& r : plan.recipes)
          if (r.id == id) {
            rec.id = r.id;
            rec.description = r.description;
            rec.recipe_path = r.origin.empty() ? r.path : r.origin;
            rec.recipe_hash = r.hash;
            rec.recipe_text = r.text;
            rec.replace_indent = r.replace_indent == recipe::ReplaceIndent::absolute ? "absolute" : "relative";
          }
        if (auto old = before.find(id); old != before.end()) rec.files = old->second->files;
        it = out.emplace(id, std::move(rec)).first;
        order.push_back(id);
      }
      auto& rec = it->second;
      rec.state = state;
      rec.applied_at = now;
      store::FileRecord fr{fc.rel, fc.site_dir, fc.dist, fc.version, prev, after, ""};
      bool merged = false;
      for (auto& f : rec.files)
        if (f.rel == fc.rel) {
          if (!upgrade_of(f, dists)) fr.before = original_under(f, prev);
          f = fr;
          merged = true;
        }
      if (!merged) rec.files.push_back(fr);
      // Plan's check of old -> new text is this record's only where that is its before -> after.
      for (auto& f : rec.files)
        if (f.rel == fc.rel && f.before == fc.old_text && f.after == fc.new_text) f.checked = fc.checked;
      prev = after;
    }
  }
  std::vector<store::PatchRecord> v;
  for (auto& id : order) {
    auto& rec = out[id];
    // Files of an older version this apply no longer patches: pip replaced them, so
    // there is nothing of ours in them to undo.
    rec.files.erase(std::remove_if(rec.files.begin(), rec.files.end(),
                                   [&](const store::FileRecord& f) { return bool(upgrade_of(f, dists)); }),
                    rec.files.end());
    auto old = before.find(id);
    rec.edits = edit_records(plan, id, old == before.end() ? std::vector<store::EditRecord>{}
                                                           : old->second->edits);
    v.push_back(std::move(rec));
  }
  return v;
}

std::vector<std::string> unreferenced(const std::vector<store::PatchRecord>& existing,
                                      const std::vector<store::PatchRecord>& put,
                                      const std::vector<std::string>& dropped) {
  std::set<std::string> replaced(dropped.begin(), dropped.end()), used, old;
  for (auto& r : put) {
    replaced.insert(r.id);
    for (auto& f : r.files) used.insert(f.rel);
  }
  for (auto& r : existing)
    for (auto& f : r.files) (replaced.count(r.id) ? old : used).insert(f.rel);
  std::vector<std::string> out;
  for (auto& rel : old)
    if (!used.count(rel)) out.push_back(rel);
  return out;
}

std::vector<std::pair<std::string, std::string>> trailers_for(
    const std::vector<store::PatchRecord>& records) {
  std::vector<std::pair<std::string, std::string>> t;
  std::set<std::string> dists;
  for (auto& r : records) {
    t.emplace_back("Sitepatch-Recipe", r.id);
    t.emplace_back("Sitepatch-Recipe-Hash", r.recipe_hash);
    for (auto& f : r.files)
      if (!f.dist.empty()) dists.insert(dist_label(f.dist, f.version));
  }
  for (auto& d : dists) t.emplace_back("Sitepatch-Distribution", d);
  return t;
}

std::string ids_of(const std::vector<store::PatchRecord>& records) {
  std::vector<std::string> ids;
  for (auto& r : records) ids.push_back(r.id);
  return util::join(ids, ", ");
}

}  // namespace sitepatch::engine::detail
