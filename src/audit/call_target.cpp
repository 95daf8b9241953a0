// The one view of what a use of a name leads to, shared by the walk (which follows
// it) and the scan (which flags it): imports, receiver types, what calls return, and
// the other branches where a name or an item may be several things.
#include "audit/known_types.hpp"
#include "audit/resolve.hpp"

namespace sitepatch::audit::detail {

namespace {

// The target a use of a name leads to, before its branches.
Target lookup(Resolver& r_, const ModuleFacts& m, int fn, const Ref& ref, const std::string& head,
              const std::string& attr) {
  if (ref.on_result && head == "super") return r_.super_method(m, fn, attr);
  if (ref.on_result && head.find("()") != std::string::npos) {
    // `Path(x).resolve().exists()`: head spells the value (Extractor::value_steps).
    Target v = r_.value_of(m, fn, head);
    return v.kind == Target::pending ? v : r_.method_of(v, attr);
  }
  Target t = r_.in_scope(m, fn, head);
  if (!ref.on_result || t.kind == Target::pending) return t;
  if (t.kind == Target::klass) {
    Target cls = t;
    t = r_.method(*t.mod, t.index, attr);
    if (Target g; r_.through_getattr(*cls.mod, cls.index, attr, t, 0, g)) return g;
    if (t.kind == Target::missing) t.kind = Target::external;  // an inherited builtin method
  } else if (t.kind == Target::external) {
    // `Path.home().exists()`, `x.float().tolist()`: the method of the class the call
    // makes, where the standard library or torch fixes it.
    std::string made = external_result(t.name);
    t.name = (made.empty() ? t.name : made) + "." + attr;
  } else if (t.kind == Target::function && !t.mod->functions[t.index].returns.empty()) {
    // `gen().build_and_load()` where gen is annotated `-> JitSpec`.
    Target r = r_.returned(*t.mod, t.index);
    t = r.kind == Target::pending ? r : r_.method_of(r, attr);
  } else {
    t = Target{};
    t.name = "method of what " + head + "() returns";
  }
  return t;
}


}  // namespace

Target call_target(Resolver& r, const ModuleFacts& m, int fn, const Ref& ref) {
  std::string head = ref.name, attr;
  if (ref.on_result) {
    size_t dot = ref.name.rfind('.');
    head = ref.name.substr(0, dot);
    attr = ref.name.substr(dot + 1);
  }
  r.also.clear();
  Target t = lookup(r, m, fn, ref, head, attr);
  std::vector<Target> branches = std::move(r.also);
  r.also.clear();
  std::vector<Target> out;
  for (const Target& b : branches) {
    Target x = b;
    if (ref.on_result) {
      // `d[k]().m()`, or gen().m() with gen imported in two arms: the method of what
      // each branch returns, when its annotation says.
      if (b.kind == Target::klass) {
        // `BACKENDS[name]().go()` over a dict of classes: each class's method.
        x = r.method(*b.mod, b.index, attr);
      } else {
        if (b.kind != Target::function || b.mod->functions[b.index].returns.empty()) continue;
        Target ret = r.returned(*b.mod, b.index);
        x = ret.kind == Target::pending ? ret : r.method_of(ret, attr);
      }
    }
    out.push_back(x);
  }
  r.also = std::move(out);
  return t;
}

}  // namespace sitepatch::audit::detail
