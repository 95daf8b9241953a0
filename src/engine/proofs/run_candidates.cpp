// explain --run's candidates for a run's breaks, narrowest first, each library frame
// judged by what is true at its calls (python/constancy): assume_constant_result fits
// where every call on the log's path passes constants and the result is one dynamo can
// hold; disable fits every frame. Each frame's verdict is kept for -v and --json.
#include <algorithm>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "engine/explain/explain_impl.hpp"
#include "engine/proofs/run_impl.hpp"
#include "sitepatch/engine/explain_run.hpp"
#include "sitepatch/python/constancy.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {

namespace {

std::string at(const PlacedFrame& f) {
  return (f.rel.empty() ? f.frame.file : f.rel) + ":" + std::to_string(f.frame.line);
}

Candidate decorate(const site::Environment& env, const PlacedFrame& f, Candidate::Kind kind) {
  Candidate c;
  c.kind = kind;
  c.fix.module = f.module;
  c.fix.function = f.qualified;
  c.fix.action = "add-decorator";
  c.fix.code = kind == Candidate::assume_constant ? "torch.compiler.assume_constant_result" : "torch.compiler.disable";
  c.fix.ensure_import = "import torch";
  c.fix.dist = f.dist;
  c.fix.version = f.version;
  c.shared = !f.site_dir.empty() && !shared_owner(env, f.site_dir).empty();
  // A function dynamo skips, called from code no recipe patches: the fix goes into the
  // library that owns it, torch itself included, and the recipe says so.
  std::string torch_itself = f.frame.skipped ? "a fix in " + (f.dist.empty() ? f.module : f.dist) +
                                                   " itself (dynamo skips " + f.qualified + ", and no library frame "
                                                   "calls it): "
                                             : "";
  if (kind == Candidate::assume_constant) {
    // Next to the def: dynamo traces through functools' caches above it, not through
    // assume_constant_result above a cache.
    c.fix.position = "innermost";
    c.fix.why = torch_itself + "dynamo runs " + f.qualified + " once while tracing and keeps its result as a constant";
    c.fix.cost = "the result is frozen in the compiled graph: a different result later (another device, a changed "
                 "config) is not seen until a recompile";
  } else if (kind == Candidate::nonstrict) {
    c.fix.code = "torch._dynamo.nonstrict_trace";
    c.fix.why = "dynamo runs " + f.qualified + " on fake tensors instead of tracing its Python (a decorator's "
                "warnings or locks are not traced), and keeps the tensor operations it saw";
    c.fix.cost = "torch >= 2.7; its inputs and outputs must be tensors or containers of them, and what it does "
                 "besides tensor operations runs while tracing, not in the compiled graph";
  } else {
    c.fix.why = "keeps dynamo out of " + f.qualified + " and everything it calls";
    c.fix.cost = "dynamo breaks the graph where " + f.qualified + " is called (fullgraph=True fails there)";
  }
  return c;
}

}  // namespace

// Reads and parses each file a frame is in once (through the host: a remote
// environment's files are there); a file that cannot be read or parsed gives nullptr
// and says why.
class Sources {
 public:
  explicit Sources(Session& s) : s_(s) {}
  const python::SourceFacts* of(const PlacedFrame& f, std::string& why) {
    std::string path = !f.site_dir.empty() ? f.site_dir + "/" + f.rel : f.frame.file;
    if (path.empty() || path[0] != '/') {
      why = "is not readable here";
      return nullptr;
    }
    auto it = cache_.find(path);
    if (it == cache_.end()) it = cache_.emplace(path, load(path)).first;
    why = it->second.why;
    return it->second.facts.get();
  }

 private:
  struct Entry {
    std::unique_ptr<python::SourceFacts> facts;
    std::string why;
  };
  Entry load(const std::string& path) {
    Entry e;
    auto data = s_.host.read({path});
    if (!data[0].exists || data[0].is_dir) {
      e.why = "is not readable here";
      return e;
    }
    try {
      e.facts = std::make_unique<python::SourceFacts>(std::move(data[0].content));
    } catch (const Error& err) {
      e.why = std::string("does not parse: ") + err.what();
    }
    return e;
  }
  Session& s_;
  std::map<std::string, Entry> cache_;
};

namespace {

// Whether every call of frame k's function on the log's path passes constants; `why`
// says which call does not, or what was true of them all.
class CallCheck {
 public:
  CallCheck(Sources& src, const std::vector<PlacedFrame>& frames, GuardGate& gate)
      : src_(src), frames_(frames), gate_(gate) {}

  // What the constant holds only under (sizes that must not change), for the cost; "" none.
  std::string condition() const { return sized_.empty() ? "" : gate_.size_condition(sized_); }

  // Whether every call of frame k's method on the log's path is made on a module-level
  // object (`current_platform.capability()`): dynamo guards such an object by identity,
  // so a result it keeps for the method stays that object's. `why` says which call is
  // made on something else (`self`, a parameter, a local), or what they are made on.
  // The calls of frame k's function its caller makes on the log's path (the caller's
  // frame index in `ck`); nullopt with `why` set when the log or the source cannot say.
  std::optional<python::CallsIn> calls_on_path(int k, int& ck, std::string& why) {
    const PlacedFrame& f = frames_[size_t(k)];
    ck = caller_of(k);
    if (ck < 0) {
      why = "the log shows no caller";
      return std::nullopt;
    }
    const PlacedFrame& caller = frames_[size_t(ck)];
    std::string unreadable;
    const python::SourceFacts* source = src_.of(caller, unreadable);
    if (!source) {
      why = "its caller's file (" + at(caller) + ") " + unreadable;
      return std::nullopt;
    }
    return source->calls_in(caller.frame.line, last_name(f.qualified));
  }

  bool global_receiver(int k, std::string& why) {
    int ck = -1;
    std::optional<python::CallsIn> found = calls_on_path(k, ck, why);
    if (!found) return false;
    const PlacedFrame& caller = frames_[size_t(ck)];
    python::CallsIn& in = *found;
    if (in.calls.empty()) {
      why = "its call at " + at(caller) + " is not in the source: what it is called on is not known";
      return false;
    }
    std::string on;
    for (const python::CallFacts& c : in.calls) {
      size_t dot = c.callee.rfind('.');
      std::string receiver = dot == std::string::npos ? "" : c.callee.substr(0, dot);
      std::string head = receiver.substr(0, receiver.find_first_of(".[("));
      auto has = [&](const std::vector<std::string>& v) { return std::find(v.begin(), v.end(), head) != v.end(); };
      std::string where = c.callee + "(...) at " + at(caller);
      if (head.empty() || receiver.find_first_of("[(") != std::string::npos) {
        why = where + " is not made on a named object";
        return false;
      }
      if (head == "self" || head == "cls" || has(in.caller_params)) {
        why = where + " is made on `" + util::printable(receiver) + "`, which " +
              (in.caller.empty() ? "the caller" : in.caller) + " is given: no object dynamo can key a result by";
        return false;
      }
      if (has(in.caller_locals)) {
        why = where + " is made on `" + util::printable(receiver) + "`, which " + in.caller +
              " makes: a new object each call";
        return false;
      }
      on = receiver;
    }
    std::string refused;
    if (!gate_.holds_method(refused)) {
      why = "a method called on `" + util::printable(on) + "`, a module-level object, but " + refused;
      return false;
    }
    why = "a method called on `" + util::printable(on) + "`, a module-level object dynamo guards by identity";
    return true;
  }

  // The parameters of frame k's function that a call of it on the log's path gives a
  // constant or a tensor's metadata (no tensor), each with the argument as written.
  std::map<std::string, std::string> non_tensor_args(int k, const python::FunctionFacts& callee) {
    std::map<std::string, std::string> out;
    int ck = -1;
    std::string why;
    std::optional<python::CallsIn> in = calls_on_path(k, ck, why);
    if (!in) return out;
    std::vector<std::string> params = plain_params(callee);
    for (const python::CallFacts& c : in->calls)
      for (const python::ArgumentFacts& a : c.args) {
        if (a.kind != python::ArgumentFacts::constant && a.kind != python::ArgumentFacts::guarded) continue;
        std::string param = a.slot;
        if (a.slot[0] == '#') {
          size_t i = std::stoul(a.slot.substr(1));
          param = i < params.size() ? params[i] : "";
        }
        if (!param.empty()) out.emplace(param, a.text);
      }
    return out;
  }

  bool constant_calls(int k, const python::FunctionFacts& callee, std::string& why) {
    int ck = -1;
    std::optional<python::CallsIn> found = calls_on_path(k, ck, why);
    if (!found) return false;
    const PlacedFrame& caller = frames_[size_t(ck)];
    python::CallsIn& in = *found;
    if (in.calls.empty()) {
      // Reached through something the source does not show calling it (a wrapper, a
      // callback): only a function that takes nothing is sure to get nothing.
      bool none = std::none_of(callee.params.begin(), callee.params.end(),
                               [&](const std::string& p) { return !callee.default_constant.count(p); });
      if (none && all_defaults_constant(callee)) {
        why = "takes no arguments that are not constants (its call at " + at(caller) + " is not in the source)";
        return true;
      }
      why = "its call at " + at(caller) + " is not in the source: what it is passed is not known";
      return false;
    }
    for (const python::CallFacts& c : in.calls)
      if (!call_constant(c, callee, ck, in, why)) return false;
    why = std::to_string(in.calls.size()) + (in.calls.size() == 1 ? " call" : " calls") + " in " +
          (in.caller.empty() ? "module level" : in.caller) + " (" + at(caller) + ")" + " pass" +
          (in.calls.size() == 1 ? "es" : "") + " only constants";
    if (!guarded_.empty())
      why += " (`" + util::printable(guarded_.front()) + "`: a tensor's metadata, which dynamo guards and holds as a "
             "constant; " + gate_.source() + ")";
    return true;
  }

 private:
  // The frame that called frame k: the nearest user or library frame before it (torch's
  // polyfills and the standard library's wrappers in between call it on its behalf).
  int caller_of(int k) const {
    for (int j = k - 1; j >= 0; --j)
      if (frames_[size_t(j)].kind == explain::FrameKind::user || frames_[size_t(j)].kind == explain::FrameKind::library)
        return j;
    return -1;
  }

  static bool all_defaults_constant(const python::FunctionFacts& f) {
    return std::all_of(f.default_constant.begin(), f.default_constant.end(), [](auto& d) { return d.second; });
  }

  // The callee's parameters, without the instance of a method.
  static std::vector<std::string> plain_params(const python::FunctionFacts& f) {
    std::vector<std::string> p = f.params;
    if (f.method && !p.empty()) p.erase(p.begin());
    return p;
  }

  bool call_constant(const python::CallFacts& c, const python::FunctionFacts& callee, int caller_k,
                     const python::CallsIn& in, std::string& why) {
    std::string where = c.callee + "(...) at line " + std::to_string(c.line);
    if (c.spread) {
      why = where + " passes *args or **kwargs";
      return false;
    }
    std::set<std::string> given;
    std::vector<std::string> params = plain_params(callee);
    for (const python::ArgumentFacts& a : c.args) {
      std::string param = a.slot;
      if (a.slot[0] == '#') {
        size_t i = std::stoul(a.slot.substr(1));
        param = i < params.size() ? params[i] : "";
      }
      given.insert(param);
      if (a.kind == python::ArgumentFacts::constant) continue;
      if (a.kind == python::ArgumentFacts::guarded) {
        std::string refused;
        if (!held(a, refused)) {
          why = where + " passes " + refused;
          return false;
        }
        continue;
      }
      if (a.kind == python::ArgumentFacts::parameter && depth_ < 3) {
        ++depth_;
        bool ok = parameter_constant(caller_k, in, a.text, why);
        --depth_;
        if (ok) continue;
        why = where + " passes `" + a.text + "`, its caller's parameter: " + why;
        return false;
      }
      why = where + " passes `" + util::printable(a.text) + "`, no constant";
      return false;
    }
    for (const std::string& p : params)
      if (!given.count(p) && callee.default_constant.count(p) && !callee.default_constant.at(p)) {
        why = where + " leaves `" + p + "` to its default, which is no constant";
        return false;
      }
    return true;
  }

  // Whether the function of frame `k` (its facts `in`) is passed a constant for `param`
  // by every call of it the frame before it makes.
  bool parameter_constant(int k, const python::CallsIn& in, const std::string& param, std::string& why) {
    const PlacedFrame& f = frames_[size_t(k)];
    if (caller_of(k) < 0) {
      why = "the compiled function's arguments are what the model passes";
      return false;
    }
    std::string unreadable;
    const python::SourceFacts* source = src_.of(f, unreadable);
    if (!source || in.caller.empty()) {
      why = "not known";
      return false;
    }
    python::FunctionFacts facts = source->function(in.caller);
    if (!facts.found) {
      why = "not known";
      return false;
    }
    return constant_calls_for(k, facts, param, why);
  }

  bool constant_calls_for(int k, const python::FunctionFacts& fn, const std::string& param, std::string& why) {
    int ck = caller_of(k);
    if (ck < 0) {
      why = "the log shows no caller";
      return false;
    }
    const PlacedFrame& caller = frames_[size_t(ck)];
    const PlacedFrame& f = frames_[size_t(k)];
    std::string unreadable;
    const python::SourceFacts* source = src_.of(caller, unreadable);
    if (!source) {
      why = "not known";
      return false;
    }
    python::CallsIn in = source->calls_in(caller.frame.line, last_name(f.qualified));
    if (in.calls.empty()) {
      why = "its call at " + at(caller) + " is not in the source";
      return false;
    }
    std::vector<std::string> params = plain_params(fn);
    size_t index = size_t(std::find(params.begin(), params.end(), param) - params.begin());
    for (const python::CallFacts& c : in.calls) {
      const python::ArgumentFacts* a = nullptr;
      for (auto& arg : c.args)
        if (arg.slot == param || arg.slot == "#" + std::to_string(index)) a = &arg;
      if (c.spread) {
        why = "a call passes *args or **kwargs";
        return false;
      }
      if (!a) {
        if (fn.default_constant.count(param) && fn.default_constant.at(param)) continue;
        why = "its default is no constant";
        return false;
      }
      if (a->kind == python::ArgumentFacts::constant) continue;
      if (a->kind == python::ArgumentFacts::guarded) {
        std::string refused;
        if (!held(*a, refused)) {
          why = "it is given " + refused + " at " + at(caller);
          return false;
        }
        continue;
      }
      if (a->kind == python::ArgumentFacts::parameter && depth_ < 3) {
        ++depth_;
        bool ok = parameter_constant(ck, in, a->text, why);
        --depth_;
        if (ok) continue;
        return false;
      }
      why = "it is given `" + util::printable(a->text) + "` at " + at(caller);
      return false;
    }
    return true;
  }

  // Whether the environment's dynamo holds guarded argument `a` as a constant (`why`:
  // why not); what it holds only under goes to the conditions.
  bool held(const python::ArgumentFacts& a, std::string& why) {
    bool sized = false;
    if (!gate_.holds(a.text, a.guards, why, sized)) return false;
    guarded_.push_back(a.text);
    if (sized && std::find(sized_.begin(), sized_.end(), a.text) == sized_.end()) sized_.push_back(a.text);
    return true;
  }

  Sources& src_;
  const std::vector<PlacedFrame>& frames_;
  GuardGate& gate_;
  int depth_ = 0;
  std::vector<std::string> guarded_;  // arguments that are constants to dynamo by its guards
  std::vector<std::string> sized_;  // guarded arguments held only while sizes stay
};

}  // namespace

CandidateFinder::CandidateFinder(Session& s) : s_(s), sources_(std::make_unique<Sources>(s)) {}

const python::SourceFacts* CandidateFinder::source_of(const PlacedFrame& f, std::string& why) {
  return sources_->of(f, why);
}
CandidateFinder::~CandidateFinder() = default;

CandidateFinder::Judged CandidateFinder::judge(const ExplainedBreak& b, int k, FrameNote& note) {
  Judged out;
  const PlacedFrame& f = b.frames[size_t(k)];
  note.function = f.name();
  note.at = at(f);
  std::string unreadable;
  const python::SourceFacts* source = sources_->of(f, unreadable);
  if (!source) {
    note.why = note.custom_op_why = "its file " + unreadable;
    return out;
  }
  python::FunctionFacts facts = source->function(f.qualified);
  if (!facts.found) {
    note.why = note.custom_op_why = "no function " + f.qualified + " in its file";
    return out;
  }
  CallCheck calls(*sources_, b.frames, gate_);
  non_tensor_args_ = calls.non_tensor_args(k, facts);
  out.custom_op = custom_op(f, facts, note);
  std::string receiver;
  if (facts.method && !calls.global_receiver(k, receiver)) {
    note.why = "a method: " + receiver;
    return out;
  }
  if (facts.result.kind == python::ResultFacts::object) {
    note.why = facts.result.why + ", no constant dynamo can hold: its caller is the place";
    return out;
  }
  if (facts.result.kind == python::ResultFacts::tensor) {
    note.why = facts.result.why + ": tensors, no constant to hold (a custom op or a traceable body is the fix)";
    return out;
  }
  std::string why;
  if (!calls.constant_calls(k, facts, why)) {
    note.why = why;
    return out;
  }
  if (facts.method) why = receiver + "; " + why;
  note.assume_constant = true;
  note.why = why + "; " +
             (facts.result.kind == python::ResultFacts::holdable ? facts.result.why
                                                                   : facts.result.why + " (the run decides)");
  out.constant = decorate(s_.env, f, Candidate::assume_constant);
  if (std::string c = calls.condition(); !c.empty()) {
    note.why += "; " + c;
    out.constant->fix.cost += "; " + c;
  }
  return out;
}

// A frame that is a decorator's wrapper (`deco.wrapper`, a nested function): the
// module-level functions of its module that its caller called by name on the frame's
// line (the decorated functions), as frames of their own for nonstrict_trace.
std::vector<PlacedFrame> CandidateFinder::decorated(const ExplainedBreak& b, int k) {
  std::vector<PlacedFrame> out;
  const PlacedFrame& f = b.frames[size_t(k)];
  if (f.what != "nested function" || k == 0) return out;
  const PlacedFrame& caller = b.frames[size_t(k - 1)];
  std::string why;
  const python::SourceFacts* from = sources_->of(caller, why);
  const python::SourceFacts* here = sources_->of(f, why);
  if (!from || !here) return out;
  for (const std::string& callee : from->callees_at(caller.frame.line)) {
    std::string name = callee.substr(callee.rfind('.') == std::string::npos ? 0 : callee.rfind('.') + 1);
    python::FunctionFacts facts = here->function(name);
    if (!facts.found || facts.method || name == f.qualified.substr(f.qualified.rfind('.') + 1)) continue;
    PlacedFrame target = f;
    target.qualified = name;
    out.push_back(target);
  }
  return out;
}

std::vector<Candidate> CandidateFinder::find(const Explanation& e, std::vector<FrameNote>* notes) {
  std::vector<Candidate> out;
  std::set<std::string> seen;
  auto add = [&](Candidate c) {
    if (seen.insert(c.key()).second) out.push_back(std::move(c));
  };
  for (const ExplainedBreak& b : e.breaks) {
    if (!b.in_library() || b.stale()) continue;
    if (b.fix && !e.fixes[*b.fix].hint.empty()) {
      Candidate c;
      c.kind = Candidate::hint;
      c.fix = e.fixes[*b.fix];
      add(c);
    }
    // The library's own pure-Python definition of the C function it stops at: dynamo
    // traces that, eager runs keep C (torch.compiler.substitute_in_graph).
    if (auto sub = substitute(b)) add(std::move(*sub));
    // Library frames, innermost first.
    std::vector<int> frames;
    for (int k = b.last; k >= b.entry && k >= 0; --k) {
      const PlacedFrame& f = b.frames[size_t(k)];
      if (f.kind == explain::FrameKind::library && f.mapped && !f.qualified.empty()) frames.push_back(k);
    }
    std::vector<Candidate> ops, seams;
    for (int k : frames) {
      FrameNote note;
      Judged j = judge(b, k, note);
      if (j.constant) add(std::move(*j.constant));
      if (j.custom_op) ops.push_back(std::move(*j.custom_op));
      if (auto seam_fix = seam(b.frames[size_t(k)], note)) seams.push_back(std::move(*seam_fix));
      if (notes && std::none_of(notes->begin(), notes->end(), [&](const FrameNote& n) { return n.at == note.at; }))
        notes->push_back(std::move(note));
    }
    // The library's own custom-op seam made real: the schema and the fake it already
    // wrote, before a custom op whose fake this guesses.
    for (auto& c : seams) add(std::move(c));
    // A decorator's wrapper dynamo cannot trace (warnings.catch_warnings): the function
    // it decorates, run on fake tensors (torch._dynamo.nonstrict_trace, torch >= 2.7).
    for (int k : frames)
      for (const PlacedFrame& target : decorated(b, k)) add(decorate(s_.env, target, Candidate::nonstrict));
    // Kernel wrappers as custom ops, innermost first; then dynamo's own config knobs its
    // hints name (a line of the user's code); then disable, which under fullgraph=True
    // only moves the break (the search drops it there).
    for (auto& c : ops) add(std::move(c));
    for (auto& c : config_knobs(b)) add(std::move(c));
    for (int k : frames) add(decorate(s_.env, b.frames[size_t(k)], Candidate::disable));
  }
  // A fix in a folder the environment shares (a .pth folder, the system's) needs
  // apply --system and reaches every environment that shares it: tried last.
  std::stable_partition(out.begin(), out.end(), [&](const Candidate& c) { return !c.shared; });
  return out;
}

std::vector<Candidate> candidates(Session& s, const Explanation& e) { return CandidateFinder(s).find(e, nullptr); }

}  // namespace sitepatch::engine
