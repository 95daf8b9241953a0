// explain's answer as text and as JSON.
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "audit_report.hpp"
#include "explain_report.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {

namespace {

using engine::FollowUp;
using engine::PlacedFrame;
using explain::FrameKind;

std::string times(int n) {
  return n == 1 ? "once" : n == 2 ? "twice" : std::to_string(n) + " times";
}

// The log's own words for a frame: its file's last part, line and function.
std::string short_file(const std::string& file) {
  std::string rel = explain::below_site(file);
  if (!rel.empty()) return rel;
  size_t slash = file.rfind('/');
  return slash == std::string::npos ? file : file.substr(slash + 1);
}

std::string frame_where(const explain::Frame& f) { return short_file(f.file) + ":" + std::to_string(f.line); }

// Dynamo's own advice from the log (a config switch such as capture_scalar_outputs).
void print_hints(const Output& out, const explain::Break& brk) {
  for (auto& h : explain::useful_hints(brk)) out.out("    dynamo's hint: " + h);
}

// The operation and what it means.
std::string headline(const engine::ExplainedBreak& b, size_t number) {
  const auto& brk = b.logged.brk;
  std::string op = brk.operation.empty() ? brk.reason : brk.operation;
  return "[" + std::to_string(number) + "] " + op + (b.means.empty() ? "" : ": " + b.means);
}

// One line per frame from the user's call on: name, what it is, owner, place.
void print_frames(const Output& out, const engine::ExplainedBreak& b) {
  int from = b.user_frame >= 0 ? b.user_frame + 1 : std::max(b.entry, 0);
  std::vector<std::array<std::string, 4>> rows;
  for (size_t i = size_t(from); i < b.frames.size(); ++i) {
    const PlacedFrame& p = b.frames[i];
    switch (p.kind) {
      case FrameKind::library:
        if (p.mapped)
          rows.push_back({p.qualified.empty() ? p.module + " (module level)" : p.name(), p.what,
                          p.dist.empty() ? "(no distribution)" : p.dist + " " + p.version, p.rel + ":" +
                                                                                                std::to_string(p.frame.line)});
        else
          rows.push_back({p.module + ":" + p.frame.function, p.stale ? "STALE" : !p.compiled.empty() ? "compiled" : "not found",
                          p.dist.empty() ? "" : p.dist + " " + p.version, p.rel + ":" + std::to_string(p.frame.line)});
        break;
      case FrameKind::torch:
        rows.push_back({"(" + p.frame.function + ")", "torch's own", "", p.rel + ":" + std::to_string(p.frame.line)});
        break;
      case FrameKind::stdlib:
        rows.push_back({p.module + ":" + p.frame.function, "standard library", "", frame_where(p.frame)});
        break;
      case FrameKind::user:
        rows.push_back({p.frame.function, "your code", "", frame_where(p.frame)});
        break;
    }
  }
  size_t w0 = 0, w1 = 0, w2 = 0;
  for (auto& r : rows) {
    w0 = std::max(w0, r[0].size());
    w1 = std::max(w1, r[1].size());
    w2 = std::max(w2, r[2].size());
  }
  for (auto& r : rows) {
    // Padded columns, without the padding an empty column leaves at the end of a line.
    std::string line = fmt::format("{:<{}}  {:<{}}  {:<{}}  {}", r[0], w0, r[1], w1, r[2], w2, r[3]);
    out.out("      " + util::trim(line));
  }
  for (size_t i = size_t(from); i < b.frames.size(); ++i)
    if (!b.frames[i].problem.empty())
      out.out(out.paint("    " + std::string(b.frames[i].stale ? "stale: " : "not mapped: ") + b.frames[i].problem,
                        Paint::warn));
}

std::string chain_text(const audit::Chain& c) {
  std::vector<std::string> names;
  for (auto& s : c.steps) names.push_back(s.name());
  const auto& last = c.steps.back();
  return util::join(names, " -> ") + " (" + last.file + ":" + std::to_string(last.line) + ")";
}

std::string gaps_of(const audit::CallGraph& g, int verbose) {
  return g.unresolved.empty() ? "every call on the way was resolved"
                              : unfollowed_text(g, verbose ? " (listed below)" : " (-v lists them)") +
                                    ", so there may be more";
}

std::string left_text(size_t remain) {
  return remain ? std::to_string(remain) + " left: the next " + (remain == 1 ? "break" : "breaks") + " after the restart"
                : "none left: each is inside a function the fixes replace or disable (a narrower fix would meet "
                  "them next)";
}

// How a fix keeps dynamo out of a function, in words.
std::string hidden_by(const FollowUp& c) {
  if (c.by_code.find("assume_constant_result") != std::string::npos)
    return "not traced: inside " + c.by + ", whose result the fix holds as a constant";
  if (c.by_code == "register-custom-op") return "not traced: inside " + c.by + ", which the fix makes a custom op";
  return "not traced: inside " + c.by + ", which the fix disables";
}

// One chain and what the fixes leave of it.
void print_follow_up(const Output& out, const FollowUp& c) {
  std::string state = c.state == FollowUp::remains   ? "remains"
                      : c.state == FollowUp::logged  ? "break [" + std::to_string(std::stoul(c.by) + 1) + "] of the log"
                      : c.state == FollowUp::removed ? "gone: the fix replaces " + c.by + "'s body"
                                                     : hidden_by(c);
  out.out(fmt::format("      {} ({}, {}): {}", c.chain.operation, c.chain.rule.id,
                      audit::to_string(c.chain.rule.severity), state));
  out.out("        " + chain_text(c.chain));
}

void print_unresolved(const Output& out, const audit::CallGraph& g) {
  for (auto& u : g.unresolved)
    out.out(fmt::format("      not followed: {}:{}  {}  {}  ({})", u.file, u.line, u.function, u.call, u.why));
}

// What the walks found besides this break, and what the fixes leave of it.
void print_after(const Output& out, const engine::ExplainedBreak& b, int verbose) {
  for (auto& w : b.walks) {
    std::vector<const FollowUp*> others;
    for (auto& c : w.chains)
      if (c.state != FollowUp::logged) others.push_back(&c);
    size_t remain = std::count_if(others.begin(), others.end(), [](const FollowUp* c) { return c->state == FollowUp::remains; });
    std::string gaps = gaps_of(w.graph, verbose);
    if (others.empty()) {
      out.out("    after the fix, from " + w.from + ": no other chain reaches a flagged operation in " +
              plural(w.graph.functions, "function", "functions") + " walked; " + gaps);
    } else {
      out.out("    after the fix, from " + w.from + ": " + plural(others.size(), "other chain", "other chains") +
              " reach flagged operations, " + left_text(remain) + "; " + gaps + ":");
      for (auto* c : others) print_follow_up(out, *c);
    }
    if (verbose) print_unresolved(out, w.graph);
  }
}

// From the user's own function: every chain, the log's breaks among them.
void print_user_walk(const Output& out, const engine::UserWalk& w, int verbose) {
  std::vector<std::string> which;
  for (size_t b : w.breaks) which.push_back("[" + std::to_string(b + 1) + "]");
  std::string head = "from your code, " + (w.walk.from.empty() ? w.frame.frame.function : w.walk.from) + " (" +
                     w.frame.rel + ", breaks " + util::join(which, ", ") + ")";
  out.out("");
  if (!w.problem.empty()) {
    out.out(head + ": not walked: " + w.problem);
    return;
  }
  const auto& chains = w.walk.chains;
  size_t remain = std::count_if(chains.begin(), chains.end(), [](const FollowUp& c) { return c.state == FollowUp::remains; });
  std::string gaps = gaps_of(w.walk.graph, verbose);
  if (chains.empty()) {
    out.out(head + ": no chain reaches a flagged operation in " + plural(w.walk.graph.functions, "function", "functions") +
            " walked; " + gaps);
    return;
  }
  size_t shown = std::count_if(chains.begin(), chains.end(), [](const FollowUp& c) { return c.state == FollowUp::logged; });
  std::string unseen = shown == chains.size()
                           ? "all of them in the log"
                           : std::to_string(shown) + " in the log, " + std::to_string(chains.size() - shown) +
                                 " it does not show yet (what the restart would meet next)" +
                                 (remain ? ", " + std::to_string(remain) + " of them left by the fixes"
                                         : ", each answered by the fixes");
  out.out(out.paint(head + ": " + plural(chains.size(), "chain reaches", "chains reach") + " flagged operations, " +
                        unseen + "; " + gaps + ":",
                    remain ? Paint::warn : Paint::plain));
  for (auto& c : chains) print_follow_up(out, c);
  if (w.through_torch)
    out.out("      (" + plural(w.through_torch, "chain", "chains") +
            " into torch's own functions left out: dynamo traces torch its own way)");
  if (verbose) print_unresolved(out, w.walk.graph);
}

void print_fix(const Output& out, const engine::ExplainedBreak& b, const engine::Explanation& e, size_t number) {
  if (!b.fix) {
    out.out(out.paint("    " + b.no_fix, Paint::warn));
    return;
  }
  const engine::Fix& f = e.fixes[*b.fix];
  bool shared = !f.breaks.empty() && f.breaks.front() != number - 1;
  std::string head = "    fix: " + f.action + " " +
                     (f.action == "add-decorator" ? f.code + " on " + f.name() : "of " + f.name()) +
                     (f.hint.empty() ? "" : " (hint " + f.hint + ")") +
                     (shared ? " (the same edit as [" + std::to_string(f.breaks.front() + 1) + "])" : "");
  out.out(out.paint(head, Paint::ok));
  if (f.action == "replace-body")
    for (auto& l : util::split(util::trim(f.code), '\n')) out.out("        " + l);
  out.out("      why: " + f.why);
  out.out("      cost: " + f.cost);
}

void print_break(const Output& out, const engine::ExplainedBreak& b, const engine::Explanation& e, size_t number,
                 int verbose) {
  const auto& brk = b.logged.brk;
  out.out("");
  out.out(out.paint(headline(b, number), Paint::header));
  std::string seen = brk.repeats ? "; seen " + times(brk.repeats + 1) : "";
  std::string where = b.logged.log + ":" + std::to_string(brk.log_line);
  if (!b.through.empty())
    out.out("    reached through " + b.through +
            (b.rule ? " (audit rule " + b.rule->id + ", " + audit::to_string(b.rule->severity) + ")"
                    : " (no audit rule flags it, so audit alone would not have found this break)") +
            seen);
  else if (!seen.empty())
    out.out("    " + seen.substr(2));
  out.out("    dynamo: " + brk.reason + " (" + where + ", " + explain::to_string(brk.format) + ")");
  if (!brk.graph_break_id.empty()) out.out("    graph break " + brk.graph_break_id + ": " + brk.graph_break_url);
  print_hints(out, brk);
  if (b.user_frame >= 0) {
    const PlacedFrame& u = b.frames[size_t(b.user_frame)];
    const PlacedFrame& en = b.frames[size_t(b.entry)];
    out.out("    your code at " + frame_where(u.frame) + " (" + u.frame.function + ") calls into " +
            (en.dist.empty() ? en.module : en.dist + " " + en.version) + ":");
  } else {
    out.out("    the library is entered at:");
  }
  print_frames(out, b);
  if (!b.unreached.empty()) out.out(out.paint("    note: " + b.unreached, Paint::warn));
  print_fix(out, b, e, number);
  if (b.fix) print_after(out, b, verbose);
}

nlohmann::json frame_json(const PlacedFrame& p) {
  nlohmann::json j = {{"file", p.frame.file},     {"line", or_null(p.frame.line)},
                      {"function", p.frame.function}, {"code", or_null(p.frame.code)},
                      {"kind", explain::to_string(p.kind)}, {"module", or_null(p.module)}};
  // The keys a library frame has and no other kind can: where it is here, whose it is.
  if (p.kind == FrameKind::library) {
    j["path"] = p.rel;
    j["site_dir"] = or_null(p.site_dir);
    j["mapped"] = p.mapped;
    j["stale"] = p.stale;
    j["compiled"] = or_null(p.compiled);
    if (p.mapped) {
      j["qualified"] = or_null(p.qualified);  // null at module level
      j["what"] = p.what;
      j["def_line"] = or_null(p.def_line);
    }
    j["distribution"] = p.dist.empty() ? nlohmann::json() : nlohmann::json{{"name", p.dist}, {"version", p.version}};
    j["problem"] = or_null(p.problem);
  }
  return j;
}

nlohmann::json steps_json(const audit::Chain& c) {
  nlohmann::json steps = nlohmann::json::array();
  for (auto& s : c.steps)
    steps.push_back({{"function", s.name()}, {"file", s.file}, {"line", s.line}});
  return steps;
}

const char* state_name(FollowUp::State s) {
  switch (s) {
    case FollowUp::logged: return "this break";
    case FollowUp::removed: return "removed";
    case FollowUp::disabled: return "disabled";
    case FollowUp::remains: return "remains";
  }
  return "?";
}

nlohmann::json walk_json(const engine::BreakWalk& w) {
  nlohmann::json chains = nlohmann::json::array(), unresolved = nlohmann::json::array();
  for (auto& c : w.chains) {
    nlohmann::json j = {{"operation", c.chain.operation}, {"rule", c.chain.rule.id},
                        {"severity", audit::to_string(c.chain.rule.severity)}, {"state", state_name(c.state)},
                        {"steps", steps_json(c.chain)}};
    if (c.state == FollowUp::logged && !c.by.empty()) j["break"] = std::stoul(c.by);
    else j["by"] = or_null(c.by);
    chains.push_back(j);
  }
  for (auto& u : w.graph.unresolved)
    unresolved.push_back({{"function", u.function}, {"file", u.file}, {"line", u.line}, {"call", u.call}, {"why", u.why},
                          {"missing_module", u.missing.empty() ? nlohmann::json() : nlohmann::json(u.missing)}});
  return {{"from", w.from}, {"functions", w.graph.functions}, {"chains", chains}, {"unresolved", unresolved}};
}

nlohmann::json break_json(const engine::ExplainedBreak& b) {
  const auto& brk = b.logged.brk;
  nlohmann::json frames = nlohmann::json::array();
  for (auto& p : b.frames) frames.push_back(frame_json(p));
  nlohmann::json walks = nlohmann::json::array();
  for (auto& w : b.walks) walks.push_back(walk_json(w));
  // A frame index is from 0, so "none" is -1 inside and null here.
  auto index = [](int i) { return i >= 0 ? nlohmann::json(i) : nlohmann::json(); };
  nlohmann::json j = {{"log", b.logged.log},       {"log_line", or_null(brk.log_line)},
                      {"format", explain::to_string(brk.format)},
                      {"reason", brk.reason},      {"explanation", or_null(brk.explanation)},
                      {"graph_break_id", or_null(brk.graph_break_id)}, {"graph_break_url", or_null(brk.graph_break_url)},
                      {"operation", or_null(brk.operation)}, {"means", or_null(b.means)},
                      {"through", or_null(b.through)}, {"repeats", brk.repeats},
                      {"in_library", b.in_library()}, {"stale", b.stale()},
                      {"user_frame", index(b.user_frame)}, {"entry_frame", index(b.entry)},
                      {"frames", frames},          {"walks", walks}};
  j["rule"] = b.rule ? nlohmann::json(b.rule->id) : nlohmann::json(nullptr);
  j["fix"] = b.fix ? nlohmann::json(*b.fix) : nlohmann::json(nullptr);
  j["no_fix"] = or_null(b.no_fix);
  j["unreached"] = or_null(b.unreached);
  j["dynamo_hints"] = explain::useful_hints(brk);
  return j;
}

}  // namespace

void print_explanation(const Output& out, const engine::Explanation& e, int verbose) {
  size_t inside = std::count_if(e.breaks.begin(), e.breaks.end(), [](auto& b) { return b.in_library(); });
  out.out(plural(e.breaks.size(), "break", "breaks") + " in the log, " + std::to_string(inside) + " inside " +
          (inside == 1 ? "a library" : "libraries"));
  for (size_t i = 0; i < e.breaks.size(); ++i) {
    if (e.breaks[i].in_library()) {
      print_break(out, e.breaks[i], e, i + 1, verbose);
      continue;
    }
    out.out("");
    out.out(out.paint(headline(e.breaks[i], i + 1), Paint::header));
    out.out("    not inside a library: " +
            (e.breaks[i].frames.empty() ? std::string("dynamo suppressed its stack and the log holds no earlier one")
                                        : "at " + frame_where(e.breaks[i].frames.back().frame) +
                                              " (" + e.breaks[i].frames.back().frame.function + ")"));
    print_hints(out, e.breaks[i].logged.brk);
  }
  for (auto& w : e.user_walks) print_user_walk(out, w, verbose);
  for (auto& f : e.fixes) {
    if (!f.breaks.empty() || f.ahead.empty()) continue;
    out.out(out.paint("    fix ahead of the log: " + f.action + " " + f.code + " on " + f.name(), Paint::ok));
    out.out("      why: " + f.why);
    out.out("      cost: " + f.cost);
  }
}

void print_user_walks(const Output& out, const std::vector<engine::UserWalk>& walks, int verbose) {
  for (auto& w : walks) print_user_walk(out, w, verbose);
}

nlohmann::json explanation_json(const engine::Explanation& e) {
  nlohmann::json breaks = nlohmann::json::array(), fixes = nlohmann::json::array();
  for (auto& b : e.breaks) breaks.push_back(break_json(b));
  for (auto& f : e.fixes)
    fixes.push_back({{"module", f.module}, {"function", f.function}, {"action", f.action}, {"code", f.code},
                     {"ensure_import", or_null(f.ensure_import)}, {"hint", or_null(f.hint)}, {"why", f.why},
                     {"cost", f.cost},
                     {"distribution", f.dist.empty() ? nlohmann::json()
                                                     : nlohmann::json{{"name", f.dist}, {"version", f.version}}},
                     {"breaks", f.breaks}, {"ahead", f.ahead}});
  nlohmann::json users = nlohmann::json::array();
  for (auto& w : e.user_walks) {
    nlohmann::json j = {{"file", w.frame.frame.file}, {"function", w.frame.frame.function}, {"breaks", w.breaks}};
    if (w.problem.empty()) j["walk"] = walk_json(w.walk);
    else j["problem"] = w.problem;
    users.push_back(j);
  }
  return {{"breaks", breaks}, {"fixes", fixes}, {"user_walks", users}};
}

void print_outside(const Output& out, const std::vector<engine::LoggedBreak>& breaks) {
  for (size_t i = 0; i < breaks.size(); ++i) {
    const auto& brk = breaks[i].brk;
    std::string op = brk.operation.empty() ? brk.reason : brk.operation;
    std::string at = "its stack is not in the log (dynamo suppressed it)";
    if (!brk.frames.empty()) {
      const explain::Frame* user = nullptr;
      for (auto& f : brk.frames)
        if (explain::kind_of(f) == FrameKind::user) user = &f;
      const explain::Frame& last = brk.frames.back();
      at = user ? "your code at " + frame_where(*user) + " (" + user->function + ")" : "";
      if (user != &last)
        at += std::string(user ? ", then " : "") +
              (explain::kind_of(last) == FrameKind::torch ? "torch's own code at " : "the standard library at ") +
              frame_where(last) + " (" + last.function + ")";
    }
    out.out(fmt::format("[{}] {}: {}; {}:{}", i + 1, op, at, breaks[i].log, brk.log_line));
    print_hints(out, brk);
  }
}

nlohmann::json outside_json(const std::vector<engine::LoggedBreak>& breaks) {
  nlohmann::json out = nlohmann::json::array();
  for (auto& lb : breaks) {
    nlohmann::json frames = nlohmann::json::array();
    for (auto& p : engine::place_by_path(lb.brk)) frames.push_back(frame_json(p));
    out.push_back({{"log", lb.log}, {"log_line", or_null(lb.brk.log_line)}, {"format", explain::to_string(lb.brk.format)},
                   {"reason", lb.brk.reason}, {"operation", or_null(lb.brk.operation)}, {"repeats", lb.brk.repeats},
                   {"in_library", false}, {"frames", frames}, {"dynamo_hints", explain::useful_hints(lb.brk)}});
  }
  return out;
}

}  // namespace sitepatch::cli
