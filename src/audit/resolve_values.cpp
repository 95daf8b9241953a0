// What values hold: a name's class from what its code assigns, annotates or is passed,
// then the steps read or called on it (`Path(p).parent / "x"`, `self.cache.root`).
#include <algorithm>

#include "audit/known_types.hpp"
#include "audit/resolve.hpp"
#include "audit/target_make.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::audit::detail {

const Target* Resolver::passed(const ModuleFacts& m, int fn, const std::string& name) const {
  if (!params || params_mod != &m || params_fn != fn) return nullptr;
  auto it = params->find(name);
  return it == params->end() ? nullptr : &it->second;
}

Target Resolver::value_of(const ModuleFacts& m, int fn, const std::string& steps, int depth) {
  // "Path().resolve().parent": the head call, then ".name()" or ".name" steps; or
  // "path.parent": a name of the function (what its code says it holds), then steps.
  if (depth > kMaxDepth) return make(Target::circular, m.name + ":" + steps);
  size_t open = steps.find("()"), dot = steps.find('.');
  Target v;
  std::string after;
  if (open != std::string::npos && (dot == std::string::npos || open < dot)) {
    v = instance(m, fn, "call:" + steps.substr(0, open), depth + 1);
    after = steps.substr(open + 2);
  } else {
    std::string head = steps.substr(0, std::min(dot, open));
    after = head.size() < steps.size() ? steps.substr(head.size()) : "";
    v = named_value(m, fn, head, after, depth + 1);
    v.exact = false;  // `q = p / "y"` is a path like p, not a constructor call
  }
  auto rest = util::split(after, '.');
  for (const std::string& step : rest) {
    if (step.empty()) continue;  // the split's leading ""
    if (v.kind == Target::pending || depth > kMaxDepth) return v;
    bool called = util::ends_with(step, "()");
    v = called ? method_result(v, step.substr(0, step.size() - 2), depth + 1) : attribute_of(v, step, depth + 1);
  }
  return v;
}

Target Resolver::named_value(const ModuleFacts& m, int fn, const std::string& head, std::string& after, int depth) {
  if (util::ends_with(head, "[]")) return element_of(m, fn, head.substr(0, head.size() - 2), depth + 1);
  for (int f = fn; f >= 0; f = f > 0 ? m.functions[f].parent : -1) {
    const Function& F = m.functions[f];
    if (f > 0 && F.cls >= 0 && !F.self_name.empty() && head == F.self_name) {
      // `p = self.ninja_path`: the receiver's class when the walk knows it.
      bool known = self_as.cls_mod && self_as.mod == &m && self_as.fn == f;
      return known ? make(Target::klass, self_as.cls_mod, self_as.cls) : make(Target::klass, &m, F.cls);
    }
    if (auto ty = F.types.find(head); ty != F.types.end())
      return ty->second.empty() ? make(Target::unknown, "what " + head + " holds is not known")
                                : instance(m, f, ty->second, depth + 1);
    if (const Target* p = passed(m, f, head)) return *p;
    if (f > 0 && F.is_local(head)) return make(Target::unknown, "what " + head + " holds is not known");
  }
  // `jit_env.FLASHINFER_JIT_DIR / "tmp"`: a module's variable, as its own code says.
  Target owner = in_scope(m, fn, head, depth + 1);
  if (owner.kind == Target::pending) return owner;
  auto steps = util::split(after, '.');
  if (owner.kind == Target::module && owner.mod && steps.size() >= 2 && !util::ends_with(steps[1], "()")) {
    const Function& top = owner.mod->functions[0];
    if (auto ty = top.types.find(steps[1]); ty != top.types.end() && !ty->second.empty()) {
      after = after.substr(1 + steps[1].size());
      return instance(*owner.mod, 0, ty->second, depth + 1);
    }
  }
  return make(Target::unknown, "what " + head + " holds is not known");
}

Target Resolver::element_of(const ModuleFacts& m, int fn, const std::string& dotted, int depth) {
  if (depth > kMaxDepth) return make(Target::circular, m.name + ":" + dotted);
  Target none = make(Target::unknown, "an item of " + dotted + ", whose class is not known");
  size_t dot = dotted.rfind('.');
  std::string owner_name, last = dotted;
  if (dot == std::string::npos) {
    for (int f = fn; f >= 0; f = f > 0 ? m.functions[f].parent : -1) {
      const Function& F = m.functions[f];
      if (auto ty = F.types.find(dotted + "[]"); ty != F.types.end())
        return ty->second.empty() ? none : instance(m, f, ty->second, depth + 1);
      if (auto b = F.imports.find(dotted); b != F.imports.end()) {
        // `from .env import DIRS`: the items that module's code puts in it.
        size_t d = b->second.rfind('.');
        if (d == std::string::npos) return none;
        owner_name = b->second.substr(0, d), last = b->second.substr(d + 1);
        break;
      }
      if (f > 0 && F.is_local(dotted)) return none;
    }
    if (owner_name.empty()) return none;
  } else {
    owner_name = dotted.substr(0, dot), last = dotted.substr(dot + 1);
  }
  Target owner = dot == std::string::npos ? global(owner_name, depth + 1) : in_scope(m, fn, owner_name, depth + 1);
  if (owner.kind == Target::pending) return owner;
  if (owner.kind != Target::module || !owner.mod) return none;
  const Function& top = owner.mod->functions[0];
  auto ty = top.types.find(last + "[]");
  if (ty == top.types.end() || ty->second.empty()) return none;
  return instance(*owner.mod, 0, ty->second, depth + 1);
}

Target Resolver::either(const ModuleFacts& m, int fn, const std::string& how, int depth) {
  Target first;
  bool have = false;
  for (const std::string& one : util::split(how, '|')) {
    Target t = instance(m, fn, one, depth + 1);
    if (t.kind == Target::pending) return t;
    if (!have) {
      first = t;
      have = true;
      continue;
    }
    bool same = t.kind == first.kind && (t.kind == Target::external ? t.name == first.name
                                                                     : t.mod == first.mod && t.index == first.index);
    if (!same || (t.kind != Target::klass && t.kind != Target::external))
      return make(Target::unknown, "assigned more than one kind of value");
    first.exact = first.exact && t.exact;
  }
  return first;
}

bool Resolver::called_value(const ModuleFacts& m, int f, const std::string& name, int depth, Target& out) {
  if (const Target* p = passed(m, f, name + "()")) {
    out = *p;
    return true;
  }
  const Function& F = m.functions[f];
  auto ty = F.types.find(name);
  if (ty == F.types.end() || ty->second.empty()) return false;
  // Each assignment names a function or class: `container = _open_file` (or `= _open_buffer`).
  std::vector<Target> each;
  for (const std::string& one : util::split(ty->second, '|')) {
    if (!util::starts_with(one, "expr:") || one.find_first_of("()[]") != std::string::npos) return false;
    Target t = in_scope(m, f, one.substr(5), depth + 1);
    if (t.kind == Target::pending) {
      out = t;
      return true;
    }
    if (t.kind != Target::function && t.kind != Target::klass && t.kind != Target::external) return false;
    each.push_back(t);
  }
  if (each.empty()) return false;
  out = each[0];
  also.insert(also.end(), each.begin() + 1, each.end());
  return true;
}

Target Resolver::method_result(const Target& inst, const std::string& name, int depth) {
  if (inst.kind == Target::external) {
    std::string made = external_result(inst.name + "." + name);
    if (!made.empty()) return make(Target::external, made);
    return make(Target::unknown, "what " + inst.name + "." + name + "() returns is not known");
  }
  if (inst.kind != Target::klass) return inst;
  Target t = method(*inst.mod, inst.index, name, depth + 1);
  if (t.kind == Target::pending) return t;
  if (t.kind != Target::function)
    return make(Target::unknown, inst.mod->name + "." + inst.mod->classes[inst.index].qualified + "." + name +
                                     " is not a method it defines");
  return returned(*t.mod, t.index, depth + 1);
}

Target Resolver::chain_method(Target inst, const std::vector<std::string>& parts, size_t from, int depth) {
  // Every class the code gives each attribute, at most kMaxAttrTypes at each step.
  std::vector<Target> now = {std::move(inst)};
  for (size_t k = from; k + 1 < parts.size(); ++k) {
    std::vector<Target> next;
    for (const Target& t : now)
      for (Target& v : attribute_values(t, parts[k], depth + 1)) {
        if (v.kind == Target::pending) return v;
        bool seen = std::any_of(next.begin(), next.end(), [&](const Target& n) {
          return n.kind == v.kind && n.mod == v.mod && n.index == v.index && n.name == v.name;
        });
        if (!seen && next.size() < Class::kMaxAttrTypes) next.push_back(std::move(v));
      }
    now = std::move(next);
  }
  // The method of each: the first one resolved is the answer, the others are followed too.
  std::vector<Target> methods;
  for (const Target& t : now) {
    Target x = method_of(t, parts.back(), depth);
    if (x.kind == Target::pending) return x;
    methods.push_back(std::move(x));
  }
  auto resolved = [](const Target& t) {
    return t.kind == Target::function || t.kind == Target::klass || t.kind == Target::external;
  };
  auto first = std::find_if(methods.begin(), methods.end(), resolved);
  if (first == methods.end()) return methods.front();
  for (auto it = first + 1; it != methods.end(); ++it)
    if (resolved(*it)) also.push_back(*it);
  return *first;
}

Target Resolver::attribute_of(const Target& inst, const std::string& attr, int depth) {
  return attribute_values(inst, attr, depth).front();
}

std::vector<Target> Resolver::attribute_values(const Target& inst, const std::string& attr, int depth) {
  if (depth > kMaxDepth) return {make(Target::circular, inst.name + "." + attr)};
  if (inst.kind == Target::external) {
    std::string cls = external_attribute(inst.name, attr);
    if (!cls.empty()) return {make(Target::external, cls)};
    return {make(Target::unknown, "what " + inst.name + "." + attr + " holds is not known")};
  }
  if (inst.kind != Target::klass) return {inst};
  const ModuleFacts& m = *inst.mod;
  // A property: reading it runs it, and its return annotation says what it gives.
  Target p = method(m, inst.index, attr, depth + 1);
  if (p.kind == Target::pending) return {p};
  if (p.kind == Target::function && p.mod->functions[p.index].is_property) {
    also.push_back(p);  // reading the property runs it
    return {returned(*p.mod, p.index, depth + 1)};
  }
  std::vector<Target> held = attribute_types(m, inst.index, attr, depth + 1);
  if (held.empty())
    return {make(Target::unknown,
                 "what " + m.name + "." + m.classes[inst.index].qualified + "." + attr + " holds is not known")};
  return held;
}

std::vector<Target> Resolver::attribute_types(const ModuleFacts& m, int cls, const std::string& attr, int depth) {
  if (depth > kMaxDepth) return {make(Target::circular, m.name + "." + m.classes[cls].qualified + "." + attr)};
  // As the code that says it sees X; the class's own word first, then its bases'.
  const Class& c = m.classes[cls];
  if (auto a = c.attr_types.find(attr); a != c.attr_types.end()) {
    std::vector<Target> out;
    for (const auto& [fn, how] : a->second) out.push_back(instance(m, fn, how, depth + 1));
    return out;
  }
  for (const auto& base : c.bases) {
    Target b = in_scope(m, c.scope, base, depth + 1);
    if (b.kind == Target::pending) return {b};
    if (b.kind != Target::klass) continue;
    std::vector<Target> t = attribute_types(*b.mod, b.index, attr, depth + 1);
    if (!t.empty()) return t;
  }
  return {};
}

}  // namespace sitepatch::audit::detail
