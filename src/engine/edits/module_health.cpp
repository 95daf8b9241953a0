// Whether each patched module, as it is now, would still import: the checks apply makes
// before it writes, made again of the files as they are. A file can be exactly as
// sitepatch left it and still be broken: another recipe's rollback took out an import
// this one's edit uses, the environment's Python changed under it, or a module an edit
// imports was uninstalled, or a compiled twin now shadows it. verify and status then exit
// 3 (FileStatus::broken).
#include <algorithm>
#include <map>
#include <set>

#include "engine/internal.hpp"
#include "sitepatch/python/module.hpp"
#include "sitepatch/recipe/recipe.hpp"
#include "sitepatch/util/strings.hpp"
#include "engine/edits/locate.hpp"
#include "engine/edits/module_health.hpp"
#include "engine/edits/unbound.hpp"
#include "sitepatch/util/hash.hpp"

namespace sitepatch::engine::detail {
namespace {

// Names free in `now` that were not free before the patch, each text parsed here.
std::vector<std::string> lost_in_texts(const std::string& before, const std::string& now, const std::string& rel,
                                       const std::vector<std::string>& builtins) {
  try {
    return lost_names(python::Module(before, rel), python::Module(now, rel), builtins);
  } catch (const Error&) {
    return {};  // not parsable: the compile check says why
  }
}

// The recorded recipe, parsed once for all its files (nullopt: none, or unreadable).
std::optional<recipe::Recipe> parsed_recipe(const store::PatchRecord& r) {
  if (r.recipe_text.empty()) return std::nullopt;
  try {
    return recorded_recipe(r, r.recipe_path.empty() ? r.id + ".yaml" : r.recipe_path);
  } catch (const Error&) {
    return std::nullopt;
  }
}

// The top-level modules the recipe's edits of `rel` ensure-import.
std::vector<std::string> ensured_modules(const store::PatchRecord& r, const std::optional<recipe::Recipe>& parsed,
                                         const std::string& rel) {
  if (!parsed) return {};
  std::set<std::string> wheres;
  for (auto& e : r.edits)
    if (e.rel == rel) wheres.insert(e.where);
  std::vector<std::string> out;
  for (auto& e : parsed->edits)
    if (!e.ensure_import.empty() && wheres.count(e.where()))
      for (auto& m : imported_modules(e.ensure_import))
        if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  return out;
}

void add_problem(FileStatus& fs, const std::string& why) {
  fs.broken = fs.broken.empty() ? why : fs.broken + "; " + why;
}

// Whether the file holds exactly the bytes apply checked under this very Python: they
// compiled and lost no name then, and cannot have changed their mind since.
bool checked_at_apply(const Session& s, const store::FileRecord& f, const std::string& content) {
  return !f.checked.empty() && content == f.after && f.checked == health_key(f.after, s.env);
}

}  // namespace

std::vector<std::string> lost_names(const python::Module& before, const python::Module& now,
                                    const std::vector<std::string>& builtins) {
  auto free_in = [&](const python::Module& m) -> std::optional<std::set<std::string>> {
    auto fn = m.free_names({{0, m.source().size()}}, builtins);
    if (!fn) return std::nullopt;
    std::set<std::string> out;
    for (auto& n : *fn) out.insert(n.name);
    return out;
  };
  auto a = free_in(before), b = free_in(now);
  if (!a || !b) return {};
  std::vector<std::string> out;
  for (auto& n : *b)
    if (!a->count(n)) out.push_back(n);
  return out;
}

std::string health_key(const std::string& text, const site::Environment& env) {
  return util::sha256_hex(text) + " " + env.python + " " + env.version;
}

void check_modules(Session& s, const std::vector<store::PatchRecord>& records, std::vector<PatchStatus>& statuses,
                   const std::map<std::string, host::FileData>& now) {
  struct Place {
    size_t patch, file;
  };
  std::map<std::string, std::vector<Place>> at;  // path -> the statuses of it
  std::vector<std::string> modules;              // ensure-imported, each once
  std::map<std::string, std::vector<std::pair<Place, std::string>>> needs;  // module -> who needs it
  std::set<std::string> unchecked;  // paths whose bytes apply did not check: compiled here
  for (size_t i = 0; i < records.size() && i < statuses.size(); ++i) {
    const store::PatchRecord& r = records[i];
    std::optional<std::optional<recipe::Recipe>> recipe;  // parsed when a file needs it
    for (size_t k = 0; k < r.files.size() && k < statuses[i].files.size(); ++k) {
      const store::FileRecord& f = r.files[k];
      FileStatus& fs = statuses[i].files[k];
      if (fs.state != FileState::applied && fs.state != FileState::modified) continue;
      std::string path = f.site_dir + "/" + f.rel;
      auto cur = now.find(path);
      if (cur == now.end() || !cur->second.exists) continue;
      at[path].push_back({i, k});
      if (!checked_at_apply(s, f, cur->second.content)) {
        unchecked.insert(path);
        auto lost = lost_in_texts(f.before, cur->second.content, f.rel, s.env.builtins);
        if (!lost.empty())
          add_problem(fs, "uses " + util::join(lost, ", ") + ", which nothing in " + f.rel +
                              " binds any more: the module raises NameError where it runs");
      }
      if (!recipe) recipe = parsed_recipe(r);
      for (auto& m : ensured_modules(r, *recipe, f.rel)) {
        if (std::find(modules.begin(), modules.end(), m) == modules.end()) modules.push_back(m);
        needs[m].push_back({{i, k}, f.rel});
      }
    }
  }
  if (at.empty()) return;
  // A compiled twin installed since the apply (a reinstall with the compiled wheel) is
  // what `import` loads: the file holds the edit, and nothing runs it.
  std::vector<std::pair<std::string, std::string>> sources;
  std::vector<std::string> source_paths;
  for (auto& [path, places] : at) {
    const store::FileRecord& f = records[places[0].patch].files[places[0].file];
    sources.emplace_back(f.site_dir, f.rel);
    source_paths.push_back(path);
  }
  auto twins = shadowing_twins(s, sources);
  for (size_t j = 0; j < twins.size(); ++j) {
    if (twins[j].empty()) continue;
    for (auto& p : at[source_paths[j]])
      add_problem(statuses[p.patch].files[p.file],
                  shadowed_message(sources[j].second, site::module_for_file(sources[j].second), twins[j]));
  }
  // Python's own compile() of every such file apply did not check as it is, in one request.
  std::vector<host::CompileRequest> asked;
  std::vector<std::string> paths;
  for (auto& [path, places] : at) {
    if (!unchecked.count(path)) continue;
    asked.push_back({statuses[places[0].patch].files[places[0].file].rel, now.at(path).content});
    paths.push_back(path);
  }
  auto compiled = asked.empty() ? std::vector<host::CompileResult>{} : s.host.compile(asked);
  for (size_t j = 0; j < compiled.size() && j < paths.size(); ++j) {
    if (compiled[j].ok) continue;
    for (auto& p : at[paths[j]])
      add_problem(statuses[p.patch].files[p.file], "does not compile in " + s.env.python + ": " + compiled[j].message);
  }
  if (modules.empty()) return;
  auto found = s.host.importable(modules);
  for (size_t j = 0; j < modules.size() && j < found.size(); ++j) {
    if (found[j]) continue;
    for (auto& [p, rel] : needs[modules[j]])
      add_problem(statuses[p.patch].files[p.file],
                  "imports " + modules[j] + ", which this environment's Python cannot find: the module fails to import");
  }
}

}  // namespace sitepatch::engine::detail
