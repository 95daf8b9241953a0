// src/engine/audit/: audit over an environment: its modules read through the Host for
// audit::flow::walk (audit_calls.cpp) and audit::scan (audit_scan.cpp), and rules --calibrate
// (calibrate.cpp: each rule's probe run by the environment's torch). The analysis itself
// is src/audit/'s.
//
// audit MODULE[:FUNCTION]: modules' texts come from site-packages through the Host, in
// batches the analysis asks for (prefetch); the analysis itself is audit::flow::walk.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include <spdlog/spdlog.h>

#include "engine/internal.hpp"
#include "sitepatch/host/distribution_index.hpp"
#include "sitepatch/audit/flow.hpp"
#include "sitepatch/engine/audit.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {

namespace {

class SiteModules : public audit::flow::ModuleTexts {
 public:
  explicit SiteModules(Session& s, const std::vector<ExtraModule>* extra = nullptr) : s_(s), extra_(extra) {}

  // Where each module's source is, in one read of every candidate file.
  struct Found {
    enum Kind { none, namespace_package, compiled, source } kind = none;
    std::string rel, dir, twin;
    const std::string* text = nullptr;
    bool package = false;
  };
  // A folder beside a compiled twin is read as the twin: import loads the extension, the
  // folder holds its stubs.
  std::vector<Found> locate(const std::vector<std::string>& modules, std::map<std::string, host::FileData>& files) {
    std::vector<std::string> paths;
    std::vector<std::vector<std::string>> cands(modules.size());
    for (size_t i = 0; i < modules.size(); ++i) {
      cands[i] = site::module_candidates(modules[i]);
      // Python's finder prefers a package (a/b/__init__.py) over a module (a/b.py).
      std::stable_partition(cands[i].begin(), cands[i].end(),
                            [](const std::string& p) { return util::ends_with(p, "/__init__.py"); });
      if (!cands[i].empty()) cands[i].push_back(util::join(util::split(modules[i], '.'), "/"));  // namespace package
      for (auto& dir : s_.env.site_dirs)
        for (auto& c : cands[i]) paths.push_back(dir + "/" + c);
    }
    // A source whose compiled twin Python imports instead never runs: the module is then
    // read as a compiled one (no Python file: its calls are externals, by name). The
    // twins are asked in the read's own wait.
    // A folder with no __init__.py is a namespace package only where no module of its
    // name is there: a C extension beside a folder of stubs is what import loads.
    auto twin_key = [](const std::string& c) { return util::ends_with(c, ".py") ? c : c + ".py"; };
    std::vector<std::string> twin_paths;
    for (size_t i = 0; i < modules.size(); ++i)
      for (auto& dir : s_.env.site_dirs)
        for (auto& c : cands[i])
          for (auto& t : site::compiled_twins(twin_key(c), s_.env.ext_suffixes)) twin_paths.push_back(dir + "/" + t);
    if (!twin_paths.empty()) s_.host.prefetch({{}, {}, twin_paths});
    for (auto& f : s_.host.read(paths)) files.emplace(f.path, std::move(f));
    std::set<std::string> twins;
    if (!twin_paths.empty()) {
      auto real = s_.host.realpath(twin_paths);
      for (size_t k = 0; k < real.size() && k < twin_paths.size(); ++k)
        if (real[k]) twins.insert(twin_paths[k]);
    }
    auto shadowed = [&](const std::string& rel, const std::string& upto) {
      for (auto& dir : s_.env.site_dirs) {
        for (auto& t : site::compiled_twins(rel, s_.env.ext_suffixes))
          if (twins.count(dir + "/" + t)) return dir + "/" + t;
        if (dir == upto) break;
      }
      return std::string();
    };
    std::vector<Found> out(modules.size());
    for (size_t i = 0; i < modules.size(); ++i) {
      bool done = false;
      for (auto& dir : s_.env.site_dirs) {
        for (auto& c : cands[i]) {
          auto it = files.find(dir + "/" + c);
          if (it == files.end() || !it->second.exists) continue;
          bool dir_entry = !util::ends_with(c, ".py");
          if (dir_entry != it->second.is_dir) continue;
          Found& f = out[i];
          f.rel = c;
          f.dir = dir;
          f.package = util::ends_with(c, "/__init__.py");
          if (std::string twin = shadowed(twin_key(c), dir);
              !twin.empty()) {
            f.kind = Found::compiled;
            f.twin = twin;
            for (auto& d : s_.env.site_dirs)
              if (util::starts_with(twin, d + "/")) f.twin = twin.substr(d.size() + 1);
          } else if (dir_entry) {
            f.kind = Found::namespace_package;
          } else {
            f.kind = Found::source;
            f.text = &it->second.content;
          }
          site_dir_[modules[i]] = dir;
          done = true;
          break;
        }
        if (done) break;
      }
    }
    return out;
  }

  /// For the value-flow analysis: one module's text (extra modules first).
  std::optional<audit::flow::ModuleText> text(const std::string& module) override {
    if (extra_)
      if (const ExtraModule* e = find_extra(module)) return audit::flow::ModuleText{e->source, e->file, "", false, false, ""};
    auto hit = texts_.find(module);
    if (hit == texts_.end()) {
      asked_.erase(module);  // asked before, and taken: read again
      prefetch({module});
      hit = texts_.find(module);
    }
    // Each text is asked once: it leaves the cache with the caller.
    std::optional<audit::flow::ModuleText> t = std::move(hit->second);
    texts_.erase(hit);
    return t;
  }

  /// Reads the modules' texts in one batch (one round trip to a remote host), kept until
  /// text() asks for them.
  void prefetch(const std::vector<std::string>& modules) override {
    // A batch saves round trips to a remote host; on this machine a text read ahead is
    // only memory held until asked for, and many never are.
    if (s_.host.local() && modules.size() > 1) return;
    std::vector<std::string> asked;
    for (auto& m : modules)
      if (!texts_.count(m) && !asked_.count(m) && !(extra_ && find_extra(m))) asked.push_back(m);
    if (asked.empty()) return;
    std::map<std::string, host::FileData> files;
    auto found = locate(asked, files);
    for (size_t i = 0; i < asked.size(); ++i) {
      asked_.insert(asked[i]);
      const Found& f = found[i];
      std::optional<audit::flow::ModuleText>& t = texts_[asked[i]];
      if (f.kind == Found::none) continue;
      t.emplace();
      if (f.text) t->source = *f.text;
      t->file = f.kind == Found::namespace_package ? f.rel + "/" : f.rel;
      t->root = f.dir;
      t->is_package = f.package || f.kind == Found::namespace_package;
      t->namespace_package = f.kind == Found::namespace_package;
      t->compiled = f.twin;
    }
  }

  std::vector<std::string> siblings(const std::string& module) override {
    auto parts = util::split(module, '.');
    parts.pop_back();
    std::string parent = util::join(parts, "/");
    std::string prefix = parts.empty() ? "" : util::join(parts, ".") + ".";
    std::vector<std::string> names;
    for (auto& dir : s_.env.site_dirs)
      for (auto& e : s_.host.list(parent.empty() ? dir : dir + "/" + parent)) {
        std::string n = e.name;
        if (!e.is_dir && util::ends_with(n, ".py")) n = n.substr(0, n.size() - 3);
        else if (!e.is_dir) continue;
        if (n == "__init__" || n == "__pycache__" || n.find('.') != std::string::npos) continue;
        names.push_back(prefix + n);
      }
    return names;
  }

  std::vector<std::string> not_installed(const std::vector<std::string>& tops) override {
    const site::Environment& env = s_.env;
    if (env.stdlib.empty()) return {};  // an agent that does not say: nothing is claimed
    std::vector<std::string> asked;
    for (auto& top : tops) {
      if (std::binary_search(env.stdlib.begin(), env.stdlib.end(), top) ||
          std::find(env.builtins.begin(), env.builtins.end(), top) != env.builtins.end() ||
          (extra_ && std::any_of(extra_->begin(), extra_->end(), [&](const ExtraModule& m) {
             return m.name.substr(0, m.name.find('.')) == top;
           })))
        continue;
      asked.push_back(top);
    }
    if (asked.empty()) return {};
    // The environment's own finders decide (a compiled extension, a .pth hook such as
    // setuptools' distutils on Python 3.12): one question for all of them.
    auto found = s_.host.importable(asked);
    std::vector<std::string> out;
    for (size_t i = 0; i < asked.size() && i < found.size(); ++i)
      if (!found[i]) out.push_back(asked[i]);
    return out;
  }

  std::vector<std::string> subclassing(const std::vector<std::string>& packages,
                                       const std::vector<std::string>& classes) override {
    std::set<std::string> out;
    read_class_lines(packages);
    for (const std::string& pkg : packages) {
      for (const ClassLine& c : class_lines_[pkg]) {
        if (out.count(c.module)) continue;
        // A base list that goes on to the next lines is not read here: the module is
        // read, and the walk decides.
        bool any = !c.closed || std::any_of(classes.begin(), classes.end(), [&](const std::string& name) {
          return util::contains_word(c.bases, name);
        });
        if (any) out.insert(c.module);
      }
    }
    return {out.begin(), out.end()};
  }

  const std::map<std::string, std::string>& site_dirs() const { return site_dir_; }

 private:
  const ExtraModule* find_extra(const std::string& m) const {
    for (auto& e : *extra_)
      if (e.name == m) return &e;
    return nullptr;
  }

  struct ClassLine {
    std::string module;
    std::string bases;  // what follows `class Name(` on its line
    bool closed;        // the line holds the closing parenthesis
  };

  // The class statements of top-level packages, read once per walk: the .py files its
  // distribution's RECORD lists (or, without one, a listing of its folder), then one
  // read that brings back only the lines holding "class ".
  void read_class_lines(const std::vector<std::string>& packages) {
    std::map<std::string, std::string> where;  // package -> site folder
    for (const std::string& pkg : packages) {
      if (class_lines_.count(pkg)) continue;
      class_lines_[pkg];
      for (auto& [module, dir] : site_dir_)
        if (module == pkg || util::starts_with(module, pkg + ".")) {
          where[pkg] = dir;
          break;
        }
    }
    if (where.empty()) return;
    std::vector<std::pair<std::string, std::string>> probe;
    for (auto& [pkg, dir] : where) probe.push_back({dir, pkg + "/__init__.py"});
    const host::DistributionIndex& dists = s_.distributions();
    dists.prefetch(probe);
    std::vector<detail::PyFile> files;
    std::vector<std::string> owners;  // the package each file is of
    for (auto& [pkg, dir] : where) {
      size_t before = files.size();
      if (const site::Distribution* d = dists.owner(dir, pkg + "/__init__.py"))
        for (auto& row : dists.files(*d)) {
          std::string rel = site::normalize_record_path(row.path);
          if (util::starts_with(rel, pkg + "/") && util::ends_with(rel, ".py") && !site::unsafe_relative_path(rel))
            files.push_back({dir + "/" + rel, rel});
        }
      if (files.size() == before) {
        auto more = detail::python_files(s_.host, dir + "/" + pkg, pkg + "/");
        files.insert(files.end(), more.begin(), more.end());
      }
      owners.resize(files.size(), pkg);
    }
    std::vector<std::string> paths;
    for (auto& f : files) paths.push_back(f.path);
    auto lines = s_.host.read_lines(paths, {"class "});
    for (size_t i = 0; i < files.size(); ++i) {
      if (!lines[i].exists) continue;
      std::string module = site::module_for_file(files[i].rel);
      for (auto& line : util::split(lines[i].content, '\n')) {
        std::string l = util::trim(line);
        if (!util::starts_with(l, "class ")) continue;
        size_t open = l.find('(');
        if (open == std::string::npos) continue;
        std::string bases = l.substr(open + 1);
        bool closed = bases.find(')') != std::string::npos;
        class_lines_[owners[i]].push_back({module, std::move(bases), closed});
      }
    }
    spdlog::debug("audit: class statements of {} read from {} files", util::join(packages, ", "), files.size());
  }

  Session& s_;
  const std::vector<ExtraModule>* extra_ = nullptr;
  std::map<std::string, std::vector<ClassLine>> class_lines_;
  std::map<std::string, std::string> site_dir_;
  std::map<std::string, std::optional<audit::flow::ModuleText>> texts_;  // read ahead, not yet asked
  std::set<std::string> asked_;                                          // modules read ahead once
};

// The value-flow analysis is the walk of audit, explain and --callgraph, for every entry.
audit::CallGraph walk_with(SiteModules& source, const audit::RuleSet& rules, const audit::WalkOptions& options) {
  return audit::flow::walk(source, rules, options);
}

}  // namespace

audit::CallGraph audit_calls(Session& s, const audit::RuleSet& rules, const audit::WalkOptions& options,
                             const std::vector<ExtraModule>& extra) {
  SiteModules source(s, &extra);
  return walk_with(source, rules, options);
}

CallAudit audit_calls(Session& s, const audit::RuleSet& rules, const audit::WalkOptions& options, bool owners) {
  SiteModules source(s);
  CallAudit a;
  a.graph = walk_with(source, rules, options);
  spdlog::info("audit: {} functions walked; {} modules read in {} batches", a.graph.functions, a.graph.modules,
               a.graph.waves);
  if (!owners) return a;
  auto owner_of = [&](const std::string& module, const std::string& file) -> const site::Distribution* {
    auto it = source.site_dirs().find(module);
    if (it == source.site_dirs().end()) return nullptr;
    return s.distributions().owner(it->second, file);
  };
  std::set<std::pair<std::string, std::string>> modules;  // module, file
  for (auto& c : a.graph.chains)
    for (auto& st : c.steps) modules.insert({st.module, st.file});
  // The entry is the first step of every chain.
  const site::Distribution* entry = nullptr;
  if (!a.graph.chains.empty()) {
    const audit::Step& first = a.graph.chains.front().steps.front();
    entry = owner_of(first.module, first.file);
  }
  if (entry) {
    a.entry_dist = entry->name;
    a.entry_version = entry->version;
    for (auto& [mod, file] : modules)
      if (owner_of(mod, file) == entry) a.entry_dist_modules.push_back(mod);
  }
  return a;
}

}  // namespace sitepatch::engine
