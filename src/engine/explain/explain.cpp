// src/engine/explain/: explain LOG over an environment: the log's frames placed in the
// installed files (explain_frames.cpp), the walk from each break's library entry and one
// fix per break (here), the user's own code walked (explain_user.cpp); explain_impl.hpp
// is what they and proofs/explain_run.cpp share. Reading the logs is src/explain/'s.
//
// sitepatch explain over an environment: place the frames (explain_frames.cpp), walk
// from the library entry as audit does, propose one fix per break, then sort the
// walk's other chains by what the fixes leave: the next break after the restart.
#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>

#include "engine/explain/explain_impl.hpp"
#include "sitepatch/engine/audit.hpp"
#include "sitepatch/recipe/recipe.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {

bool ExplainedBreak::stale() const {
  return std::any_of(frames.begin(), frames.end(), [](const PlacedFrame& p) { return p.stale; });
}

namespace {

using explain::FrameKind;

// The library frames from the entry on (torch's own left out): the path the log shows.
std::vector<const PlacedFrame*> library_path(const ExplainedBreak& b, int from) {
  std::vector<const PlacedFrame*> out;
  for (size_t i = size_t(from); b.entry >= 0 && i < b.frames.size(); ++i)
    if (b.frames[i].kind == FrameKind::library) out.push_back(&b.frames[i]);
  return out;
}

// Whether a walk's chain is the path the log shows (same functions, same lines).
bool is_logged(const audit::Chain& c, const std::vector<const PlacedFrame*>& path) {
  if (c.steps.size() != path.size()) return false;
  for (size_t i = 0; i < path.size(); ++i)
    if (c.steps[i].name() != path[i]->name() || c.steps[i].line != path[i]->frame.line) return false;
  return true;
}

bool walked(const audit::CallGraph& g, const std::string& fn) {
  return std::any_of(g.walked.begin(), g.walked.end(), [&](const audit::Walked& w) { return w.function == fn; });
}

// Walks from the entry, then from the first library frame the walk did not reach (the
// log shows the call audit could not follow), and so on down the stack.
void walk_break(Session& s, const audit::RuleSet& rules, ExplainedBreak& b) {
  auto path = library_path(b, b.entry);
  for (size_t i = 0; i < path.size(); ++i) {
    const PlacedFrame& p = *path[i];
    if (!p.mapped || p.qualified.empty()) break;  // nothing to walk from (module level, not found)
    if (!b.walks.empty() && walked(b.walks.back().graph, p.name())) continue;
    if (!b.walks.empty() && b.unreached.empty()) {
      const PlacedFrame& caller = *path[i - 1];
      std::string why;
      for (auto& u : b.walks.back().graph.unresolved)
        if (u.function == caller.name() && u.line == caller.frame.line) why = " (`" + u.call + "`: " + u.why + ")";
      b.unreached = "audit's walk did not follow the call at " + caller.rel + ":" + std::to_string(caller.frame.line) +
                    why + "; the log shows it reaches " + p.name() + ", walked from there too";
    }
    BreakWalk w;
    w.from = p.name();
    try {
      auto started = std::chrono::steady_clock::now();
      w.graph = audit_calls(s, rules, {p.module, p.qualified, 0, p.frame.line}, false).graph;
      spdlog::debug("explain: walked from {}: {} functions in {:.2f} s", p.name(), w.graph.functions,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    } catch (const Error& e) {
      b.unreached = "audit could not walk from " + p.name() + ": " + e.what();
      break;
    }
    b.walks.push_back(std::move(w));
  }
  // The chain that is this break: the log's path from where its walk started.
  for (auto& w : b.walks) {
    auto start = std::find_if(path.begin(), path.end(), [&](const PlacedFrame* p) { return p->name() == w.from; });
    std::vector<const PlacedFrame*> tail(start, path.end());
    for (auto& c : w.graph.chains)
      if (is_logged(c, tail)) {
        b.through = c.operation;
        b.rule = c.rule;
      }
  }
}

// What the last library frame is: its source, annotation and the flagged calls it makes.
explain::FunctionText function_text(const ExplainedBreak& b, const detail::ParsedFile& file) {
  const PlacedFrame& p = b.frames[size_t(b.last)];
  explain::FunctionText t;
  for (auto& f : file.facts.functions)
    if (f.qualified == p.qualified && f.line == p.def_line) {
      for (int l = f.line; l <= f.end_line && l <= int(file.lines.size()); ++l) t.source += file.lines[size_t(l - 1)] + "\n";
      t.returns = f.returns_inferred ? "" : f.returns;  // a hint's {returns} is the annotation
    }
  for (auto& w : b.walks)
    for (auto& c : w.graph.chains)
      if (c.steps.back().name() == p.name()) t.calls.push_back(c.operation);
  if (!b.through.empty()) t.calls.push_back(b.through);
  return t;
}

const char* kDisableCost =
    "torch.compiler.disable makes {fn} opaque: dynamo runs it eagerly, and the call to it is a graph break of "
    "its own, so torch.compile(fullgraph=True) still fails there (\"Skip calling torch.compiler.disable()d "
    "function\"); without fullgraph the model runs with one graph break at {fn}";

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

// The fix for one break: a hint's body for the function making the call, else disable
// on the function the user's code calls.
std::optional<Fix> propose(const ExplainedBreak& b, const std::map<std::string, detail::ParsedFile>& files,
                           const explain::HintSet& hints, std::string& no_fix) {
  if (!b.in_library()) return std::nullopt;
  const PlacedFrame& entry = b.frames[size_t(b.entry)];
  if (b.stale()) {
    no_fix = "no fix proposed: the package changed since the log (the stale frames above); run the model again for a "
             "current log";
    return std::nullopt;
  }
  if (!entry.mapped) {
    no_fix = "no fix proposed: " + entry.problem;
    return std::nullopt;
  }
  if (entry.qualified.empty()) {
    no_fix = "no fix proposed: the library is entered at module level (" + entry.rel + ":" +
             std::to_string(entry.frame.line) + "), which no decorator reaches";
    return std::nullopt;
  }
  Fix f;
  const PlacedFrame& last = b.frames[size_t(b.last)];
  if (last.mapped && !last.qualified.empty()) {
    explain::FunctionText text = function_text(b, files.at(last.rel));
    if (const explain::Hint* h = hints.fix_for(text)) {
      f.module = last.module;
      f.function = last.qualified;
      f.action = "replace-body";
      f.code = explain::body_for(*h, text);
      f.ensure_import = h->ensure_import;
      f.hint = h->id;
      f.why = h->why;
      f.cost = last.qualified + " no longer does what its old body did" +
               (b.through.empty() ? "" : " (" + b.through + ")") +
               ": check that the new body means the same where the model runs";
      f.dist = last.dist;
      f.version = last.version;
      return f;
    }
  }
  f = detail::disable_fix(entry.module, entry.qualified);
  f.why = "keeps dynamo out of " + entry.qualified + " and everything it calls";
  f.dist = entry.dist;
  f.version = entry.version;
  return f;
}

// Each chain of each walk: this break, gone with a replaced body, hidden by a disabled
// function, or still there after the fixes (the next break).
void sort_chains(ExplainedBreak& b, const std::vector<Fix>& fixes) {
  auto path = library_path(b, b.entry);
  for (auto& w : b.walks) {
    w.chains.clear();
    auto start = std::find_if(path.begin(), path.end(), [&](const PlacedFrame* p) { return p->name() == w.from; });
    std::vector<const PlacedFrame*> tail(start, path.end());
    for (auto& c : w.graph.chains) {
      FollowUp u;
      u.chain = c;
      if (is_logged(c, tail)) u.state = FollowUp::logged;
      else u.state = detail::left_by(c, fixes, u.by, &u.by_code);
      w.chains.push_back(std::move(u));
    }
  }
}

}  // namespace

recipe::Edit fix_edit(const Fix& f) {
  recipe::Edit e;
  e.module = f.module;
  e.target = f.function;
  e.action = f.action == "replace-body"         ? recipe::Action::replace_body
             : f.action == "register-custom-op" ? recipe::Action::register_custom_op
             : f.action == "add-decorator"      ? recipe::Action::add_decorator
             : f.action == "insert-after"       ? recipe::Action::insert_after
                                                : throw Error("a fix with no action a recipe has: " + f.action);
  e.code = f.code;
  if (e.action != recipe::Action::add_decorator) {
    // A body is a `|` block: one final newline, as the recipe reads it back.
    while (util::ends_with(e.code, "\n")) e.code.pop_back();
    e.code += "\n";
  }
  e.innermost = f.position == "innermost";
  e.occurrence = f.occurrence;
  if (f.is_class) e.kind = recipe::TargetKind::class_;
  e.ensure_import = f.ensure_import;
  return e;
}

// Through the recipe writer's quoting: a module or a body taken from files others may
// write can hold anything, and must read back as itself.
std::string edit_yaml(const Fix& f) { return recipe::edit_yaml(fix_edit(f)); }

std::string detail::disable_cost(const std::string& fn) { return replace_all(kDisableCost, "{fn}", fn); }

Fix detail::disable_fix(const std::string& module, const std::string& qualified) {
  Fix f;
  f.module = module;
  f.function = qualified;
  f.action = "add-decorator";
  f.code = "torch.compiler.disable";
  f.ensure_import = "import torch";
  f.cost = disable_cost(qualified);
  return f;
}

FollowUp::State detail::left_by(const audit::Chain& c, const std::vector<Fix>& fixes, std::string& by,
                                std::string* by_code) {
  // A replaced body takes the chain away; a disabled function only hides it.
  for (const char* action : {"replace-body", "add-decorator", "register-custom-op"})
    for (auto& st : c.steps)
      for (auto& f : fixes)
        if (f.action == action && st.name() == f.name()) {
          by = f.name();
          if (by_code) *by_code = f.action == "add-decorator" ? f.code : f.action;
          return f.action == "replace-body" ? FollowUp::removed : FollowUp::disabled;
        }
  return FollowUp::remains;
}

namespace {

void add_fix(Explanation& e, size_t index, Fix f) {
  auto same = std::find_if(e.fixes.begin(), e.fixes.end(), [&](const Fix& o) {
    return o.name() == f.name() && o.action == f.action && o.code == f.code;
  });
  if (same == e.fixes.end()) {
    f.breaks.push_back(index);
    e.breaks[index].fix = e.fixes.size();
    e.fixes.push_back(std::move(f));
  } else {
    same->breaks.push_back(index);
    e.breaks[index].fix = size_t(same - e.fixes.begin());
  }
}

}  // namespace

Explanation explain(Session& s, std::vector<LoggedBreak> breaks, const audit::RuleSet& rules,
                    const explain::HintSet& hints, bool user_code) {
  Explanation e;
  for (auto& lb : breaks) {
    ExplainedBreak b;
    b.frames = place_by_path(lb.brk);
    b.entry = explain::entry_frame(lb.brk);
    b.last = explain::last_library_frame(lb.brk);
    for (int i = b.entry - 1; i >= 0; --i)
      if (b.frames[size_t(i)].kind == FrameKind::user) {
        b.user_frame = i;
        break;
      }
    b.means = hints.meaning(lb.brk.operation);
    b.logged = std::move(lb);
    e.breaks.push_back(std::move(b));
  }
  auto files = detail::place_frames(s, e.breaks);
  // Every fix imports torch (torch.compiler.disable, torch.version.cuda): where the
  // environment cannot import it, the patched module would no longer import at all.
  bool inside = std::any_of(e.breaks.begin(), e.breaks.end(), [](auto& b) { return b.in_library(); });
  std::string no_torch = inside && !s.host.importable({"torch"})[0]
                             ? "no fix proposed: torch is not importable in " + s.env.prefix +
                                   ", and every fix needs it (`import torch` would break the patched module's "
                                   "import there); explain against the environment the model runs in"
                             : "";
  for (size_t i = 0; i < e.breaks.size(); ++i) {
    ExplainedBreak& b = e.breaks[i];
    if (!b.in_library()) continue;
    if (!b.stale() && b.frames[size_t(b.entry)].mapped && !b.frames[size_t(b.entry)].qualified.empty())
      walk_break(s, rules, b);
    if (b.through.empty()) {
      // Audit did not find the chain: name the call as the log's first standard library frame has it.
      for (size_t k = size_t(b.last + 1); k < b.frames.size(); ++k)
        if (b.frames[k].kind == FrameKind::stdlib) {
          b.through = b.frames[k].module + "." + b.frames[k].frame.function;
          break;
        }
    }
    if (!no_torch.empty()) b.no_fix = no_torch;
    else if (auto f = propose(b, files, hints, b.no_fix)) add_fix(e, i, std::move(*f));
  }
  e.no_torch = !no_torch.empty();
  if (user_code) walk_from_user_code(s, rules, e);
  else
    for (auto& b : e.breaks) sort_chains(b, e.fixes);
  return e;
}

void walk_from_user_code(Session& s, const audit::RuleSet& rules, Explanation& e) {
  detail::walk_user_code(s, rules, e);
  detail::mark_user_chains(e);
  if (!e.no_torch) detail::fix_ahead(s, e);
  // Every chain again, now that the fixes ahead of the log are known.
  for (auto& b : e.breaks) sort_chains(b, e.fixes);
  detail::mark_user_chains(e);
  e.user_code_walked = true;
}

}  // namespace sitepatch::engine
