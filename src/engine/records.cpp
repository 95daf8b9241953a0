#include "records.hpp"

#include <set>

#include "internal.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine::detail {

std::vector<store::PatchRecord> records_for(const Plan& plan,
                                            const std::vector<store::PatchRecord>& existing,
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
            rec.recipe_path = r.path;
            rec.recipe_hash = r.hash;
            rec.recipe_text = r.text;
          }
        if (auto old = before.find(id); old != before.end()) rec.files = old->second->files;
        it = out.emplace(id, std::move(rec)).first;
        order.push_back(id);
      }
      auto& rec = it->second;
      rec.state = state;
      rec.applied_at = now;
      store::FileRecord fr{fc.rel, fc.site_dir, fc.dist, fc.version, prev, after};
      bool merged = false;
      for (auto& f : rec.files)
        if (f.rel == fc.rel) {
          // Re-applied: the original is still what this recipe first found.
          fr.before = f.before;
          f = fr;
          merged = true;
        }
      if (!merged) rec.files.push_back(fr);
      prev = after;
    }
  }
  std::vector<store::PatchRecord> v;
  for (auto& id : order) v.push_back(std::move(out[id]));
  return v;
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
