// plan: locate every edit, compute each file's new text on one parse, check the
// result parses (tree-sitter) and compiles (the environment's own Python).
#include <algorithm>
#include <map>
#include <set>

#include "internal.hpp"
#include "locate.hpp"
#include "sitepatch/python/module.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {
namespace {

using detail::Located;

// Recipe-level check of `requires:` against the installed distribution.
std::string requirement_problem(Session& s, const recipe::Recipe& r) {
  if (!r.requires) return "";
  const auto& req = *r.requires;
  std::string wanted = req.name + req.specifier;
  const site::Distribution* d = s.distributions().find(req.name);
  if (!d) return r.id + " requires " + wanted + ", which is not installed";
  auto v = recipe::Version::parse(d->version);
  if (!v) return r.id + " requires " + wanted + "; installed " + d->name + " " + d->version +
                 " has a version sitepatch cannot compare";
  if (recipe::satisfies(*v, req.clauses)) return "";
  return r.id + " requires " + wanted + "; installed: " + d->name + " " + d->version +
         (s.force ? " (applying anyway: --force)" : " (--force applies anyway)");
}

// Where else in the same distribution a missing name is defined: the user most
// likely named the wrong module.
std::string defined_elsewhere(Session& s, const Located& where, const recipe::Edit& e) {
  const site::Distribution* d = s.distributions().owner(where.site_dir, where.rel);
  if (!d) return "";
  std::string leaf = e.target.substr(e.target.rfind('.') + 1);
  std::vector<std::string> paths, rels;
  for (auto& row : d->record) {
    if (!util::ends_with(row.path, ".py") || row.path == where.rel ||
        util::starts_with(row.path, "..") || row.path[0] == '/')
      continue;
    paths.push_back(d->site_dir + "/" + row.path);
    rels.push_back(row.path);
  }
  std::vector<std::string> found;
  auto files = s.host.read(paths);
  for (size_t i = 0; i < files.size(); ++i) {
    if (!files[i].exists || files[i].content.find(leaf) == std::string::npos) continue;
    python::Module m(files[i].content);
    for (auto& def : m.definitions())
      if (def.qualified == e.target && def.kind == e.kind)
        found.push_back(site::module_for_file(rels[i]) + " (" + rels[i] + ":" +
                        std::to_string(def.line) + ")");
  }
  if (found.empty()) return "";
  return "; " + d->name + " defines it in " + util::join(found, ", ");
}

std::string failure_message(const python::EditResult& r) {
  std::string m = r.message;
  if (r.failure == python::Failure::not_found && !r.nearest.empty())
    m += "; nearest: " + util::join(r.nearest, ", ");
  return m;
}

struct FileWork {
  Located where;
  std::vector<size_t> edits;  // indices into the flattened edit list, in recipe order
};

}  // namespace

Plan plan(Session& s, std::vector<recipe::Recipe> recipes) {
  Plan p;
  p.recipes = std::move(recipes);

  // Flatten the edits of every recipe; a recipe whose `requires:` fails is skipped whole.
  std::vector<const recipe::Edit*> edits;
  std::vector<size_t> recipe_of;
  for (size_t ri = 0; ri < p.recipes.size(); ++ri) {
    const auto& r = p.recipes[ri];
    std::string problem = requirement_problem(s, r);
    bool skip = !problem.empty() && !s.force;
    if (!problem.empty() && skip) p.problems.push_back(problem);
    for (auto& e : r.edits) {
      EditStatus st;
      st.recipe_id = r.id;
      st.where = e.where();
      st.action = std::string(recipe::action_name(e.action));
      st.recipe_path = r.path;
      st.recipe_line = e.mark.line;
      st.recipe_column = e.mark.column;
      if (skip) {
        st.state = EditState::failed;
        st.message = "skipped: " + problem;
      }
      p.edits.push_back(st);
      edits.push_back(&e);
      recipe_of.push_back(ri);
    }
  }

  std::vector<const recipe::Edit*> wanted;
  std::vector<size_t> wanted_index;
  for (size_t i = 0; i < edits.size(); ++i)
    if (p.edits[i].state != EditState::failed) {
      wanted.push_back(edits[i]);
      wanted_index.push_back(i);
    }
  auto located = detail::locate(s, wanted);

  // Group by file, keeping the order files were first named.
  std::vector<FileWork> work;
  std::map<std::string, size_t> work_of;
  for (size_t k = 0; k < wanted.size(); ++k) {
    size_t i = wanted_index[k];
    if (!located[k].ok) {
      p.edits[i].state = EditState::failed;
      p.edits[i].message = located[k].error;
      continue;
    }
    p.edits[i].file = located[k].rel;
    auto [it, fresh] = work_of.emplace(located[k].path, work.size());
    if (fresh) work.push_back({std::move(located[k]), {}});
    work[it->second].edits.push_back(i);
  }

  std::vector<host::CompileRequest> compile;
  std::vector<size_t> compile_file;
  for (auto& w : work) {
    FileChange fc;
    fc.rel = w.where.rel;
    fc.site_dir = w.where.site_dir;
    fc.path = w.where.path;
    fc.old_text = w.where.content;
    fc.old_sha = util::sha256_hex(fc.old_text);
    if (const auto* d = s.distributions().owner(fc.site_dir, fc.rel)) {
      fc.dist = d->name;
      fc.version = d->version;
    }
    // One parse per recipe that touches the file (once, in the usual case of one).
    std::string text = fc.old_text;
    for (size_t a = 0; a < w.edits.size();) {
      size_t ri = recipe_of[w.edits[a]];
      std::vector<const recipe::Edit*> batch;
      std::vector<size_t> idx;
      for (; a < w.edits.size() && recipe_of[w.edits[a]] == ri; ++a) {
        batch.push_back(edits[w.edits[a]]);
        idx.push_back(w.edits[a]);
      }
      python::Module m(text);
      std::vector<python::EditResult> results;
      std::string next = m.apply(batch, results);
      for (size_t j = 0; j < idx.size(); ++j) {
        auto& st = p.edits[idx[j]];
        const auto& r = results[j];
        st.line = r.line;
        st.message = r.message;
        if (r.outcome == python::Outcome::already_applied) st.state = EditState::already_applied;
        if (r.outcome == python::Outcome::failed) {
          st.state = EditState::failed;
          st.message = failure_message(r);
          if (r.failure == python::Failure::not_found && !batch[j]->target.empty())
            st.message += defined_elsewhere(s, w.where, *batch[j]);
        }
      }
      if (next != text) fc.steps.emplace_back(p.recipes[ri].id, next);
      text = std::move(next);
    }
    fc.new_text = text;
    if (fc.new_text == fc.old_text) continue;

    // The result must parse; name the edits of this file if it does not.
    python::Module result(fc.new_text);
    auto problems = result.syntax_problems();
    if (!problems.empty()) {
      const auto& pr = problems.front();
      for (size_t i : w.edits)
        if (p.edits[i].state == EditState::will_apply) {
          p.edits[i].state = EditState::failed;
          p.edits[i].message = "the result does not parse: " + fc.rel + ":" +
                               std::to_string(pr.line) + ":" + std::to_string(pr.column) + ": " +
                               pr.message;
        }
      continue;
    }
    compile.push_back({fc.rel, fc.new_text});
    compile_file.push_back(p.files.size());
    fc.diff = store::unified_diff(fc.old_text, fc.new_text, fc.rel);
    p.files.push_back(std::move(fc));
  }

  // The environment's own Python has the last word on syntax (its version's grammar).
  if (!compile.empty()) {
    auto results = s.host.compile(compile);
    std::set<size_t> rejected;
    for (size_t k = 0; k < results.size(); ++k) {
      if (results[k].ok) continue;
      const auto& fc = p.files[compile_file[k]];
      rejected.insert(compile_file[k]);
      for (auto& st : p.edits)
        if (st.file == fc.rel && st.state == EditState::will_apply) {
          st.state = EditState::failed;
          st.message = "Python " + s.env.version + " rejects the result: " + results[k].message;
        }
    }
    if (!rejected.empty()) {
      std::vector<FileChange> kept;
      for (size_t k = 0; k < p.files.size(); ++k)
        if (!rejected.count(k)) kept.push_back(std::move(p.files[k]));
      p.files = std::move(kept);
    }
  }
  return p;
}

}  // namespace sitepatch::engine
