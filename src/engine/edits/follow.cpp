#include "engine/edits/follow.hpp"

#include <algorithm>

#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine::detail {

const python::Module& ModuleCache::get(const Located& l) {
  auto it = modules_.find(l.path);
  if (it == modules_.end())
    it = modules_.emplace(l.path, std::make_shared<const python::Module>(*l.content, l.rel)).first;
  return *it->second;
}

void ModuleCache::put(const std::string& path, python::Module m) {
  modules_[path] = std::make_shared<const python::Module>(std::move(m));
}

std::string resolve_import(const std::string& importer, bool importer_is_package,
                           const std::string& written) {
  size_t dots = 0;
  while (dots < written.size() && written[dots] == '.') ++dots;
  if (dots == 0) return written;
  auto parts = util::split(importer, '.');
  if (!importer_is_package) parts.pop_back();
  for (size_t up = 1; up < dots; ++up) {
    if (parts.empty()) return "";
    parts.pop_back();
  }
  std::string rest = written.substr(dots);
  if (!rest.empty()) parts.push_back(rest);
  if (parts.empty()) return "";
  return util::join(parts, ".");
}

namespace {

struct Walk {
  Session& s;
  const recipe::Edit& e;
  ModuleCache& cache;
  const site::Distribution* home;
  std::string top_package;
  std::string rest;  // ".method" of "Class.method", or ""
  Followed out;
  std::vector<std::string> chain;  // modules from the start to the current one

  // Looks for `name` in `mod` (file `at`); true when found (out filled).
  bool visit(const Located& at, const std::string& mod, const std::string& name, int depth) {
    const python::Module& m = cache.get(at);
    if (depth > 0 && (m.defines(name + rest) || m.defines(name))) {
      out.moved = true;
      out.where = at;
      out.module = mod;
      out.target = name + rest;
      return true;
    }
    if (depth > 32) return false;
    bool package = util::ends_with(at.rel, "/__init__.py");
    auto names = m.imported_names();
    // Python binds the last statement's name: look from the bottom up.
    std::vector<const python::ImportedName*> tries;
    for (auto it = names.rbegin(); it != names.rend(); ++it)
      if (it->bound == name || it->bound == "*") tries.push_back(&*it);
    // An explicit import of the name beats a star import.
    std::stable_partition(tries.begin(), tries.end(), [&](auto* b) { return b->bound == name; });
    for (const python::ImportedName* b : tries) {
      std::string next = resolve_import(mod, package, b->module);
      if (next.empty()) continue;
      std::string next_name = b->bound == "*" ? name : b->name;
      if (std::find(chain.begin(), chain.end(), next) != chain.end()) {
        std::vector<std::string> cycle = chain;
        cycle.push_back(next);
        out.problem = "re-export cycle: " + util::join(cycle, " -> ");
        continue;
      }
      recipe::Edit probe;
      probe.module = next;
      auto found = locate(s, {&probe});
      if (!found[0].ok) {
        if (b->bound == name)
          out.problem = mod + " imports " + name + " from " + next + ", which is not found";
        continue;
      }
      const site::Distribution* owner = s.distributions().owner(found[0].site_dir, found[0].rel);
      bool outside = home ? owner != home : next.substr(0, next.find('.')) != top_package;
      if (outside) {
        if (b->bound == name)
          out.problem = mod + " imports " + name + " from " + next + ", outside " +
                        (home ? home->name : top_package) + " (not followed)";
        continue;
      }
      chain.push_back(next);
      if (visit(found[0], next, next_name, depth + 1)) return true;
      chain.pop_back();
    }
    return false;
  }
};

}  // namespace

Followed follow(Session& s, const Located& start, const recipe::Edit& e, ModuleCache& cache) {
  std::string mod = e.module.empty() ? site::module_for_file(start.rel) : e.module;
  size_t dot = e.target.find('.');
  std::string name = e.target.substr(0, dot);
  Walk w{s, e, cache, s.distributions().owner(start.site_dir, start.rel),
         mod.substr(0, mod.find('.')), dot == std::string::npos ? "" : e.target.substr(dot), {}, {mod}};
  if (w.visit(start, mod, name, 0)) {
    w.out.note = name + " is re-exported: " + util::join(w.chain, " -> ") + "; patching it there";
  }
  return w.out;
}

}  // namespace sitepatch::engine::detail
