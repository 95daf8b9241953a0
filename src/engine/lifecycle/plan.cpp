// plan: locate every edit, compute each file's new text on one parse, check the
// result parses (tree-sitter) and compiles (the environment's own Python).
#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <set>

#include <spdlog/spdlog.h>

#include "engine/edits/follow.hpp"
#include "engine/edits/locate.hpp"
#include "engine/edits/module_health.hpp"
#include "engine/edits/result_check.hpp"
#include "engine/edits/unbound.hpp"
#include "engine/internal.hpp"
#include "engine/records/file_state.hpp"
#include "engine/records/history_access.hpp"
#include "sitepatch/python/compile_view.hpp"
#include "sitepatch/python/module.hpp"
#include "sitepatch/util/budget.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/parallel.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {
namespace {

using detail::Located;

// Recipe-level check of one `requires:` against the installed distribution.
// A source build's version (torch's `1.13.0a0+gitunknown`) is a pre-release, which
// PEP 440 orders before its release: `>=1.13` refuses it, and users rarely expect that.
std::string prerelease_note(const recipe::Version& v, const recipe::Requirement& req) {
  if (!v.pre && !v.dev) return "";
  std::vector<std::string> parts;
  for (long n : v.release) parts.push_back(std::to_string(n));
  std::string release = util::join(parts, ".");
  return ", a pre-release, which PEP 440 orders before " + release + ": to admit it, write the bound as " +
         req.name + ">=" + release + (v.dev && !v.pre ? ".dev0" : "a0");
}

std::string requirement_problem(Session& s, const recipe::Recipe& r, const recipe::Requirement& req) {
  std::string wanted = req.name + req.specifier;
  const site::Distribution* d = s.distributions().find(req.name);
  if (!d) return r.id + " requires " + wanted + ", which is not installed";
  auto v = recipe::Version::parse(d->version);
  if (!v) return r.id + " requires " + wanted + "; installed " + d->name + " " + d->version +
                 " has a version sitepatch cannot compare";
  if (recipe::satisfies(*v, req.clauses)) return "";
  return r.id + " requires " + wanted + "; installed: " + d->name + " " + d->version + prerelease_note(*v, req) +
         (s.force ? " (applying anyway: --force)" : " (--force applies anyway)");
}

// Every `requires:` of the recipe; the ones that fail, each said.
std::string requirement_problem(Session& s, const recipe::Recipe& r) {
  std::vector<std::string> out;
  for (const auto& req : r.requires)
    if (auto problem = requirement_problem(s, r, req); !problem.empty()) out.push_back(problem);
  return util::join(out, "; ");
}

// Where else in the same distribution a missing name is defined: the user most
// likely named the wrong module.
std::string defined_elsewhere(Session& s, const Located& where, const recipe::Edit& e) {
  const site::Distribution* d = s.distributions().owner(where.site_dir, where.rel);
  if (!d) return "";
  std::string leaf = e.target.substr(e.target.rfind('.') + 1);
  std::vector<std::string> paths, rels;
  for (auto& row : s.distributions().files(*d)) {
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
    std::optional<python::Module> parsed;
    try {
      parsed.emplace(files[i].content, rels[i]);
    } catch (const Error&) {
      continue;  // a file Python cannot read either defines nothing
    }
    const python::Module& m = *parsed;
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
  std::set<std::string> others;  // lines the applied patches of other recipes wrote in it
};

struct FileOutcome {
  FileChange fc;
  std::vector<std::pair<size_t, python::EditResult>> results;  // flattened edit index, result
  std::vector<python::SyntaxProblem> problems;                 // of the new text
  std::vector<detail::EditSpan> spans;                         // what each edit wrote in it
  std::map<size_t, std::vector<python::FreeName>> unbound;     // flattened edit index -> free names
  std::optional<std::vector<std::pair<size_t, size_t>>> statements;  // the new text's top-level rows
};

// The edits of one file; pure CPU work, safe to run beside other files. `parsed` is
// the original's parse (made once, before the edits were grouped).
FileOutcome edit_file(const FileWork& w, const python::Module& parsed,
                      const std::vector<const recipe::Edit*>& edits, const std::vector<size_t>& recipe_of,
                      const std::vector<recipe::Recipe>& recipes, const site::Environment& env, bool to_write) {
  FileOutcome o;
  FileChange& fc = o.fc;
  fc.rel = w.where.rel;
  fc.site_dir = w.where.site_dir;
  fc.path = w.where.path;
  fc.old_text = *w.where.content;
  fc.old_sha = util::sha256_hex(fc.old_text);
  // One parse per recipe that touches the file (once, in the usual case of one); the
  // result is re-parsed incrementally from the last tree, to check it.
  std::string text = fc.old_text;
  std::optional<python::Module> later;
  const python::Module* last = &parsed;
  std::vector<python::TextChange> changes;
  std::set<std::string> others = w.others;
  for (size_t a = 0; a < w.edits.size();) {
    size_t ri = recipe_of[w.edits[a]];
    std::vector<const recipe::Edit*> batch;
    std::vector<size_t> idx;
    for (; a < w.edits.size() && recipe_of[w.edits[a]] == ri; ++a) {
      batch.push_back(edits[w.edits[a]]);
      idx.push_back(w.edits[a]);
    }
    std::vector<python::EditResult> results;
    if (text != last->source()) last = &later.emplace(text, fc.rel);
    std::string next = last->apply(batch, results, &changes, &others);
    detail::carry_spans(o.spans, changes, idx);
    for (size_t j = 0; j < idx.size(); ++j) o.results.emplace_back(idx[j], results[j]);
    if (next != text) {
      fc.steps.emplace_back(recipes[ri].id, next);
      // Only another recipe's batch in this file reads them (its imports go apart).
      if (a < w.edits.size())
        for (auto& l : store::added_lines(text, next)) others.insert(l);
    }
    text = std::move(next);
  }
  fc.new_text = std::move(text);
  if (fc.new_text != fc.old_text) {
    python::Module result = last->edited(fc.new_text, changes);
    o.problems = result.syntax_problems();
    o.statements = result.top_level_rows();
    if (o.problems.empty()) o.unbound = detail::free_names_by_edit(result, fc.rel, o.spans, env.builtins);
    // What verify would ask of these bytes, asked now on the parses at hand (one
    // recipe's: several are each checked against their own original, later).
    if (to_write && o.problems.empty() && fc.steps.size() == 1 &&
        detail::lost_names(parsed, result, env.builtins).empty())
      fc.checked = detail::health_key(fc.new_text, env);
  }
  return o;
}

// The target's text as last recorded -> as it is now, headed by where each was.
std::string target_diff(const store::EditRecord& was, const EditStatus& now, const FileChange& fc,
                        const std::string& target) {
  std::string d = store::unified_diff(was.original, now.original, fc.rel);
  size_t hunks = d.find("\n@@");
  if (hunks == std::string::npos) return d;
  return "--- " + was.rel + ": " + target + " in " + was.dist + " " + was.version + "\n+++ " + fc.rel +
         ": " + target + " in " + fc.dist + " " + fc.version + d.substr(hunks);
}

// Whether the target's own text changed since the recipe was applied to another
// version: upstream may have fixed the bug, or changed what the edit assumed.
void note_upstream_change(EditStatus& st, const std::map<std::string, const store::PatchRecord*>& record_of,
                          const FileChange& fc) {
  auto it = record_of.find(st.recipe_id);
  if (it == record_of.end() || st.original.empty()) return;
  for (const store::EditRecord& was : it->second->edits) {
    if (was.where != st.where || was.fingerprint.empty()) continue;
    if (was.version == fc.version && was.dist == fc.dist) return;
    if (was.fingerprint == util::sha256_hex(st.original)) return;
    std::string target = st.where.substr(st.where.find(':') + 1);
    st.upstream = target + " changed in " + (fc.version.empty() ? "the installed version" : fc.version) +
                  ": review the diff";
    st.upstream_diff = target_diff(was, st, fc, target);
    return;
  }
}

// What the recipe's `on-upgrade` makes of an upgrade that replaced files it patched:
// will_apply (reapply), skipped (warn) or failed (fail), with the message for its edits.
std::pair<EditState, std::string> on_upgrade(Session& s, const recipe::Recipe& r,
                                             const std::map<std::string, const store::PatchRecord*>& record_of,
                                             Plan& p) {
  auto it = record_of.find(r.id);
  if (it == record_of.end()) return {EditState::will_apply, ""};
  auto replaced = detail::upgrades_of(*it->second, s.distributions());
  if (replaced.empty()) return {EditState::will_apply, ""};
  std::string what = util::join(replaced, ", ");
  // Reapplied: note_reapplied() tells, once the edits show whether the new version needs them.
  if (r.on_upgrade == recipe::OnUpgrade::reapply || s.force) return {EditState::will_apply, ""};
  if (r.on_upgrade == recipe::OnUpgrade::warn) {
    std::string m = what + "; not reapplied (on-upgrade: warn; --force reapplies)";
    p.notes.push_back(r.id + ": " + m);
    return {EditState::skipped, m};
  }
  std::string m = what + "; the recipe says on-upgrade: fail (review the new version, then apply --force)";
  p.problems.push_back(r.id + ": " + m);
  return {EditState::failed, m};
}

// A recipe reapplied after an upgrade: say so, unless every edit is already in the new
// version (upstream took the fix): then its record of the old version's files has
// nothing left to undo, and apply drops it.
void note_reapplied(Session& s, Plan& p, const std::map<std::string, const store::PatchRecord*>& record_of) {
  for (const auto& r : p.recipes) {
    auto it = record_of.find(r.id);
    if (it == record_of.end()) continue;
    auto replaced = detail::upgrades_of(*it->second, s.distributions());
    bool reapplied = !replaced.empty(), all_there = true;
    for (const auto& e : p.edits)
      if (e.recipe_id == r.id) {
        reapplied = reapplied && e.state != EditState::skipped && e.state != EditState::failed;
        all_there = all_there && e.state == EditState::already_applied;
      }
    if (!reapplied) continue;
    if (!all_there) {
      p.notes.push_back(r.id + ": " + util::join(replaced, ", ") + "; reapplying");
      continue;
    }
    p.forget.push_back(r.id);
    p.notes.push_back(r.id + ": every edit is already in the installed version (upstream has the fix); "
                      "nothing to reapply, and its record of the old version is dropped");
  }
}

// How many lines `code` starts with that are blank (re-indenting drops them).
int leading_blank_lines(std::string_view code) {
  int n = 0;
  for (size_t at = 0; at < code.size();) {
    size_t nl = code.find('\n', at);
    if (nl == std::string_view::npos || code.substr(at, nl - at).find_first_not_of(" \t\r") != std::string_view::npos)
      break;
    ++n;
    at = nl + 1;
  }
  return n;
}

// A changed file that does not parse or compile: the edit that wrote the bad lines
// fails with Python's own message, where the lines came from in the recipe, and the
// lines themselves (the patched file is never written, so the user cannot look); the
// file's other edits fail as not applied.
void fail_bad_result(Plan& p, const std::vector<size_t>& file_edits, const FileOutcome& o,
                     const host::CompileResult& compiled, const std::vector<const recipe::Edit*>& edits,
                     const std::string& python_version) {
  const FileChange& fc = o.fc;
  detail::BadSpot spot;
  std::string why;
  if (!compiled.ok) {
    spot = {std::max(compiled.line, 1), compiled.column};
    why = "Python " + python_version + " rejects the result: " +
          (compiled.reason.empty() ? compiled.message : compiled.reason);
  } else {
    const auto& pr = o.problems.front();
    spot = {pr.line, pr.column};
    why = "the result does not parse: " + pr.message;
  }
  size_t blamed = SIZE_MAX;
  if (!o.spans.empty()) {
    const detail::EditSpan& span = detail::culprit(o.spans, fc.new_text, spot);
    blamed = span.edit;
    const recipe::Edit& e = *edits[blamed];
    const EditStatus& st = p.edits[blamed];
    int first = detail::line_of(fc.new_text, span.begin), last = detail::line_of(fc.new_text, span.end - 1);
    recipe::Mark at = e.mark;
    if (first <= spot.line && spot.line <= last && e.code_mark.line > 0) {
      int code_line = spot.line - first + 1 + (e.action == recipe::Action::replace ? 0 : leading_blank_lines(e.code));
      at = e.code_position(code_line, 1);
    }
    why += " (from " + st.recipe_path + ":" + std::to_string(at.line) + ")\n" +
           detail::excerpt(fc.new_text, spot, fc.rel);
  }
  for (size_t i : file_edits) {
    auto& st = p.edits[i];
    if (st.state != EditState::will_apply) continue;
    st.state = EditState::failed;
    if (i == blamed || blamed == SIZE_MAX)
      st.message = why;
    else
      st.message = "not applied: " + fc.rel + " would not compile with the edit at " + p.edits[blamed].recipe_path +
                   ":" + std::to_string(p.edits[blamed].recipe_line) + ":" +
                   std::to_string(p.edits[blamed].recipe_column);
  }
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Flattens the edits of every recipe into `edits` (with `recipe_of` and a status in
// `p.edits` each); a recipe whose `requires:` fails, or whose on-upgrade says not to
// reapply, is skipped whole.
// A recipe under the id of another, applied one would share its record: its files would
// replace the first's there, and a later reapply or rollback would know only one of them.
std::string id_problem(const Plan& p, size_t ri, const std::map<std::string, const store::PatchRecord*>& record_of) {
  const auto& r = p.recipes[ri];  // two recipes of one command with one id: refused by load_recipes
  auto it = record_of.find(r.id);
  if (it == record_of.end() || it->second->recipe_hash.empty() || it->second->recipe_hash == r.hash) return "";
  const auto& applied = *it->second;
  return r.id + ": already applied from another recipe" +
         (applied.recipe_path.empty() ? std::string() : " (" + applied.recipe_path + ", whose content differs)") +
         "; give " + r.path + " another id, or roll the applied one back first: sitepatch rollback " + r.id;
}

EditStatus status_of(const recipe::Recipe& r, const recipe::Edit& e) {
  EditStatus st;
  st.recipe_id = r.id;
  st.where = e.where();
  st.action = std::string(recipe::action_name(e.action));
  st.recipe_path = r.path;
  st.recipe_line = e.mark.line;
  st.recipe_column = e.mark.column;
  return st;
}

void flatten_edits(Session& s, Plan& p, const std::map<std::string, const store::PatchRecord*>& record_of,
                   std::vector<const recipe::Edit*>& edits, std::vector<size_t>& recipe_of) {
  for (size_t ri = 0; ri < p.recipes.size(); ++ri) {
    const auto& r = p.recipes[ri];
    std::string clash = id_problem(p, ri, record_of);
    std::string problem = clash.empty() ? requirement_problem(s, r) : clash;
    bool skip = !clash.empty() || (!problem.empty() && !s.force);
    if (!problem.empty() && skip) p.problems.push_back(problem);
    auto [upgraded_state, upgrade_message] =
        problem.empty() ? on_upgrade(s, r, record_of, p) : std::pair{EditState::will_apply, std::string()};
    for (auto& e : r.edits) {
      EditStatus st = status_of(r, e);
      if (skip) {
        st.state = EditState::failed;
        st.message = (clash.empty() ? "skipped: " + problem : "not applied: " + clash.substr(r.id.size() + 2));
      } else if (upgraded_state != EditState::will_apply) {
        st.state = upgraded_state;
        st.message = upgrade_message;
      }
      p.edits.push_back(st);
      edits.push_back(&e);
      recipe_of.push_back(ri);
    }
  }
}

// Each file's edit results into the edits' statuses, with what plan adds to them: the
// owning distribution, where else a missing name is defined, an upstream change, the
// names new code uses that nothing binds.
void record_results(Session& s, Plan& p, const std::vector<FileWork>& work, std::vector<FileOutcome>& out,
                    const std::vector<const recipe::Edit*>& edits, const std::vector<std::string>& follow_problem,
                    const std::map<std::string, const store::PatchRecord*>& record_of) {
  std::vector<std::pair<std::string, std::string>> files;
  for (size_t k = 0; k < work.size(); ++k) files.emplace_back(out[k].fc.site_dir, out[k].fc.rel);
  s.distributions().prefetch(files);  // every file's owner in one round trip
  for (size_t k = 0; k < work.size(); ++k) {
    if (const auto* d = s.distributions().owner(out[k].fc.site_dir, out[k].fc.rel)) {
      out[k].fc.dist = d->name;
      out[k].fc.version = d->version;
    }
    for (auto& [i, r] : out[k].results) {
      auto& st = p.edits[i];
      st.line = r.line;
      st.message = r.message;
      st.original = r.original;
      if (r.outcome == python::Outcome::already_applied) st.state = EditState::already_applied;
      if (r.outcome == python::Outcome::failed) {
        st.state = EditState::failed;
        st.message = failure_message(r);
        if (r.failure == python::Failure::not_found && !edits[i]->target.empty()) {
          if (!follow_problem[i].empty()) st.message += "; " + follow_problem[i];
          st.message += defined_elsewhere(s, work[k].where, *edits[i]);
        }
      }
      if (st.state == EditState::will_apply)
        note_upstream_change(st, record_of, out[k].fc);
    }
    detail::note_unbound(p, out[k].fc.rel, out[k].unbound);
    for (auto& [i, r] : out[k].results) detail::note_abstract(s, p.edits[i], *edits[i], work[k].where.site_dir);
  }
  if (!s.wheel) detail::note_unimportable(p, edits, s.host);
}

// Every changed file is checked twice: tree-sitter found its ERROR and MISSING nodes
// when it was edited; now the environment's own Python compiles what the edits changed
// (its version's grammar has the last word). A file that passes goes
// into `p.files`; one that fails fails the edit that broke it. Returns how many changed.
size_t check_results(Session& s, Plan& p, const std::vector<FileWork>& work, std::vector<FileOutcome>& out,
                   const std::vector<const recipe::Edit*>& edits) {
  std::vector<size_t> changed;
  for (size_t k = 0; k < out.size(); ++k)
    if (out[k].fc.new_text != out[k].fc.old_text) changed.push_back(k);
  // Python compiles only the top-level statements the edits changed (compile_view):
  // the rest compiled before the edit, and compiling it again was half of a large
  // recipe's plan.
  std::vector<host::CompileRequest> compile(changed.size());
  util::parallel_for(changed.size(), [&](size_t c) {
    auto& o = out[changed[c]];
    auto& fc = o.fc;
    fc.diff = store::unified_diff(fc.old_text, fc.new_text, fc.rel);
    compile[c].label = fc.rel;
    compile[c].source = o.statements ? python::compile_view(fc.new_text, *o.statements,
                                                            store::changed_rows(fc.old_text, fc.new_text))
                                     : fc.new_text;
  });
  std::vector<host::CompileResult> compiled;
  if (!compile.empty()) compiled = s.host.compile(compile);

  for (size_t c = 0; c < changed.size(); ++c) {
    auto& w = work[changed[c]];
    auto& fc = out[changed[c]].fc;
    if (out[changed[c]].problems.empty() && compiled[c].ok) {
      p.files.push_back(std::move(fc));
      continue;
    }
    fail_bad_result(p, w.edits, out[changed[c]], compiled[c], edits, s.env.version);
  }
  return changed.size();
}

// Groups the located edits by file, keeping the order files were first named and each
// file's edits in recipe order; an edit that could not be located fails here.
// The lines each applied patch of another recipe wrote in a file this plan edits: new
// imports are placed apart from them (python::Module::apply), so either can be rolled
// back alone.
void note_others_lines(const Plan& p, const std::vector<store::PatchRecord>& existing, std::vector<FileWork>& work) {
  for (auto& w : work)
    for (auto& r : existing) {
      if (std::any_of(p.recipes.begin(), p.recipes.end(), [&](auto& mine) { return mine.id == r.id; })) continue;
      for (auto& f : r.files)
        if (f.rel == w.where.rel && f.site_dir == w.where.site_dir)
          for (auto& l : store::added_lines(f.before, f.after))
            if (!util::trim(l).empty()) w.others.insert(l);
    }
}

std::vector<FileWork> group_by_file(Plan& p, std::vector<Located>& located, const std::vector<size_t>& wanted_index) {
  std::vector<FileWork> work;
  std::map<std::string, size_t> work_of;
  for (size_t k = 0; k < located.size(); ++k) {
    size_t i = wanted_index[k];
    if (!located[k].ok) {
      p.edits[i].state = EditState::failed;
      p.edits[i].message = located[k].error;
      continue;
    }
    p.edits[i].file = located[k].rel;
    auto [it, fresh] = work_of.emplace(located[k].path, work.size());
    if (fresh) work.push_back({std::move(located[k]), {}, {}});
    work[it->second].edits.push_back(i);
  }
  for (auto& w : work) std::sort(w.edits.begin(), w.edits.end());
  return work;
}

}  // namespace

Plan plan(Session& s, std::vector<recipe::Recipe> recipes) {
  auto lock = detail::read_lock(s);
  auto history = detail::HistoryAccess::open(s, false);
  return detail::plan_against(s, std::move(recipes),
                              history ? history->patches() : std::vector<store::PatchRecord>{}, false);
}

namespace detail {

Plan plan_against(Session& s, std::vector<recipe::Recipe> recipes,
                  const std::vector<store::PatchRecord>& existing, bool to_write) {
  auto t0 = std::chrono::steady_clock::now();
  Plan p;
  p.recipes = std::move(recipes);
  std::map<std::string, const store::PatchRecord*> record_of;
  for (auto& r : existing) record_of[r.id] = &r;

  std::vector<const recipe::Edit*> edits;
  std::vector<size_t> recipe_of;
  flatten_edits(s, p, record_of, edits, recipe_of);

  std::vector<const recipe::Edit*> wanted;
  std::vector<size_t> wanted_index;
  for (size_t i = 0; i < edits.size(); ++i)
    if (p.edits[i].state == EditState::will_apply) {
      wanted.push_back(edits[i]);
      wanted_index.push_back(i);
    }
  auto located = detail::locate(s, wanted);
  spdlog::info("plan: located {} edit(s) ({:.0f} ms)", wanted.size(), ms_since(t0));

  // Each located file parsed in parallel, to see whether it defines its edits' targets;
  // only the parses a re-export's follow reads are kept (memory bounded by the files in
  // flight, not by the recipe): the edit pass parses the others again on its thread.
  ModuleCache cache;
  std::vector<char> defined(wanted.size(), 1);
  {
    std::map<std::string, std::vector<size_t>> edits_of;  // path -> indices into located
    for (size_t k = 0; k < located.size(); ++k)
      if (located[k].ok && !wanted[k]->target.empty()) edits_of[located[k].path].push_back(k);
    std::vector<const std::vector<size_t>*> files;
    for (auto& [path, ks] : edits_of) files.push_back(&ks);
    std::vector<std::optional<python::Module>> kept(files.size());
    util::parallel_for(files.size(), [&](size_t j) {
      const Located& l = located[files[j]->front()];
      auto top = [&](size_t k) { return std::string_view(wanted[k]->target).substr(0, wanted[k]->target.find('.')); };
      // Most files say so in their text: then the edit pass's parse is the only one.
      if (std::all_of(files[j]->begin(), files[j]->end(),
                      [&](size_t k) { return python::plainly_defines(*l.content, top(k)); }))
        return;
      python::Module m(*l.content, l.rel);
      bool follows = false;
      for (size_t k : *files[j]) {
        defined[k] = m.defines(top(k));
        follows = follows || !defined[k];
      }
      if (follows) kept[j].emplace(std::move(m));
    });
    for (size_t j = 0; j < files.size(); ++j)
      if (kept[j]) cache.put(located[files[j]->front()].path, std::move(*kept[j]));
    util::return_freed_memory();
  }
  std::deque<recipe::Edit> renamed;  // followed edits whose target an `as` renamed
  std::vector<std::string> follow_problem(edits.size());
  for (size_t k = 0; k < wanted.size(); ++k) {
    size_t i = wanted_index[k];
    if (!located[k].ok) continue;
    p.edits[i].module = wanted[k]->module.empty() ? site::module_for_file(located[k].rel) : wanted[k]->module;
    const std::string& target = wanted[k]->target;
    if (target.empty() || defined[k]) continue;
    auto f = follow(s, located[k], *wanted[k], cache);
    if (!f.moved) {
      follow_problem[i] = f.problem;
      continue;
    }
    located[k] = std::move(f.where);
    p.edits[i].module = f.module;
    p.edits[i].followed = f.note;
    if (f.target != target) {
      renamed.push_back(*wanted[k]);
      renamed.back().target = f.target;
      edits[i] = wanted[k] = &renamed.back();
    }
  }

  std::vector<FileWork> work = group_by_file(p, located, wanted_index);
  note_others_lines(p, existing, work);

  // 1. Each file's edits, on a parse of its own, files in parallel.
  s.distributions();  // listed once, before the threads ask it (it reads under its own lock)
  std::vector<FileOutcome> out(work.size());
  util::parallel_for(work.size(), [&](size_t k) {
    const Located& l = work[k].where;
    std::optional<python::Module> own;  // freed as soon as the file is edited
    const python::Module* parsed = cache.has(l.path) ? &cache.get(l) : &own.emplace(*l.content, l.rel);
    out[k] = edit_file(work[k], *parsed, edits, recipe_of, p.recipes, s.env, to_write);
  });
  util::return_freed_memory();
  record_results(s, p, work, out, edits, follow_problem, record_of);
  spdlog::info("plan: {} file(s) parsed and edited ({:.0f} ms)", work.size(), ms_since(t0));

  size_t changed = check_results(s, p, work, out, edits);
  spdlog::info("plan: {} changed file(s) checked by tree-sitter and compiled by Python {} ({:.0f} ms)",
               changed, s.env.version, ms_since(t0));
  note_reapplied(s, p, record_of);
  if (!s.wheel) {
    std::set<std::string> recorded;
    for (auto& [id, _] : record_of) recorded.insert(id);
    detail::note_shipped(s, p, recorded);
  }
  refuse_overlaps(s, p, existing);
  note_placement(s, p);
  return p;
}

std::string requirements_unmet(Session& s, const recipe::Recipe& r) { return requirement_problem(s, r); }

}  // namespace detail
}  // namespace sitepatch::engine
