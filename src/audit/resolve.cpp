// Name resolution over module facts. Every lookup is bounded by `depth`: re-exports
// can form loops (`a` imports from `b`, `b` from `a`).
#include "audit/resolve.hpp"

#include <algorithm>
#include <set>

#include "audit/known_types.hpp"
#include "audit/target_make.hpp"

#include "sitepatch/util/strings.hpp"

namespace sitepatch::audit::detail {

namespace {

// Python's builtins (3.11's, and 3.13's PythonFinalizationError): inside a module, a name
// it does not bind is one of these before it is anything a star import of a compiled
// module may bind.
bool python_builtin(const std::string& name) {
  static const std::set<std::string> kBuiltins = {
    "ArithmeticError", "AssertionError", "AttributeError", "BaseException", "BaseExceptionGroup",
    "BlockingIOError", "BrokenPipeError", "BufferError", "BytesWarning", "ChildProcessError",
    "ConnectionAbortedError", "ConnectionError", "ConnectionRefusedError", "ConnectionResetError",
    "DeprecationWarning", "EOFError", "Ellipsis", "EncodingWarning", "EnvironmentError", "Exception",
    "ExceptionGroup", "False", "FileExistsError", "FileNotFoundError", "FloatingPointError", "FutureWarning",
    "GeneratorExit", "IOError", "ImportError", "ImportWarning", "IndentationError", "IndexError",
    "InterruptedError", "IsADirectoryError", "KeyError", "KeyboardInterrupt", "LookupError", "MemoryError",
    "ModuleNotFoundError", "NameError", "None", "NotADirectoryError", "NotImplemented", "NotImplementedError",
    "OSError", "OverflowError", "PendingDeprecationWarning", "PermissionError", "ProcessLookupError",
    "RecursionError", "ReferenceError", "ResourceWarning", "RuntimeError", "RuntimeWarning",
    "StopAsyncIteration", "StopIteration", "SyntaxError", "SyntaxWarning", "SystemError", "SystemExit",
    "TabError", "TimeoutError", "True", "TypeError", "UnboundLocalError", "UnicodeDecodeError",
    "UnicodeEncodeError", "UnicodeError", "UnicodeTranslateError", "UnicodeWarning", "UserWarning",
    "ValueError", "Warning", "ZeroDivisionError", "abs", "aiter", "all", "anext", "any", "ascii", "bin",
    "bool", "breakpoint", "bytearray", "bytes", "callable", "chr", "classmethod", "compile", "complex",
    "copyright", "credits", "delattr", "dict", "dir", "divmod", "enumerate", "eval", "exec", "exit", "filter",
    "float", "format", "frozenset", "getattr", "globals", "hasattr", "hash", "help", "hex", "id", "input",
    "int", "isinstance", "issubclass", "iter", "len", "license", "list", "locals", "map", "max", "memoryview",
    "min", "next", "object", "oct", "open", "ord", "pow", "print", "property", "quit", "range", "repr",
    "reversed", "round", "set", "setattr", "slice", "sorted", "staticmethod", "str", "sum", "super", "tuple",
    "type", "vars", "zip", "PythonFinalizationError"};
  return kBuiltins.count(name) > 0;
}

}  // namespace

const ModuleFacts* Resolver::module_named(const std::string& name, bool& pending) {
  auto it = modules.find(name);
  if (it == modules.end()) {
    if (closed) return nullptr;
    wanted.insert(name);
    pending = true;
    return nullptr;
  }
  return it->second ? &*it->second : nullptr;
}

bool Resolver::branches(const Function& F, const std::string& name, const std::string& tail, int depth) {
  auto o = F.other_imports.find(name);
  if (o == F.other_imports.end()) return true;
  for (const auto& target : o->second) {
    if (active_.count(target + tail)) continue;
    Target t = global(target + tail, depth + 1);
    if (t.kind == Target::pending) return false;
    if (t.kind == Target::function || t.kind == Target::klass || t.kind == Target::external) also.push_back(t);
  }
  return true;
}

Target Resolver::global(const std::string& dotted, int depth) {
  if (depth > kMaxDepth) return make(Target::circular, dotted);
  if (active_.count(dotted)) return make(Target::circular, dotted);
  // Erased on every return: a name is "being resolved" only below its own lookup.
  struct Active {
    std::set<std::string>& set;
    std::set<std::string>::iterator it;
    ~Active() { set.erase(it); }
  } guard{active_, active_.insert(dotted).first};
  auto parts = util::split(dotted, '.');
  bool pending = false;
  const ModuleFacts* top = module_named(parts[0], pending);
  if (pending) {
    // Ask for every prefix at once: `a.b.c.f` will need a, a.b and a.b.c anyway.
    std::string prefix = parts[0];
    for (size_t i = 1; i < parts.size(); ++i) {
      prefix += "." + parts[i];
      if (!modules.count(prefix)) wanted.insert(prefix);
    }
    return make(Target::pending);
  }
  if (!top) {
    Target t = make(Target::external, dotted);
    t.index = kNoModuleFile;
    return t;
  }
  if (parts.size() == 1) return make(Target::module, top, -1);
  Target t = attr(*top, parts, 1, depth + 1);
  if (t.kind == Target::missing) return make(Target::unknown, dotted + " is not defined in its module");
  return t;
}

Target Resolver::attr(const ModuleFacts& m, const std::vector<std::string>& parts, size_t i, int depth) {
  if (depth > kMaxDepth) return make(Target::circular, m.name + tail_of(parts, i));
  if (!m.compiled.empty())
    return make(Target::unknown, m.name + tail_of(parts, i) + " is compiled: " + m.compiled +
                                     " is what import loads, not " + m.file + ", and the walk cannot read it");
  const std::string& name = parts[i];
  bool last = i + 1 == parts.size();
  const Function& top = m.functions[0];
  std::string tail = tail_of(parts, i + 1);
  if (auto d = top.defs.find(name); d != top.defs.end()) return defined_function(m, name, last, d->second, depth);
  if (auto c = m.class_names.find(name); c != m.class_names.end()) {
    if (last) return make(Target::klass, &m, c->second);
    if (i + 2 == parts.size()) {
      Target t = method(m, c->second, parts[i + 1], depth + 1);
      if (t.kind == Target::missing)
        return make(Target::unknown, m.name + "." + name + "." + parts[i + 1] + " is not defined");
      return t;
    }
    return make(Target::unknown, "attribute of a class attribute");
  }
  // A binding that leads back to the name being resolved is a package's own
  // submodule (`from . import jit` in rp/__init__.py, then rp.jit.x): Python's
  // import system sets that attribute to the submodule, so look there.
  std::string circle;  // the binding that led back, when nothing else is found
  std::string circle_module;
  if (auto b = top.imports.find(name); b != top.imports.end()) {
    // `from .simplify import simplify` in sympy/__init__.py rebinds the name to a
    // function of the submodule of that name; a path that goes on through the name
    // (an import target: sympy.simplify.simplify) goes through the submodule.
    std::string own = m.name + "." + name;
    if (!last && m.is_package && util::starts_with(b->second, own + ".")) {
      bool pending = false;
      const ModuleFacts* sub = module_named(own, pending);
      if (pending) return make(Target::pending);
      if (sub) return attr(*sub, parts, i + 1, depth + 1);
    }
    if (!active_.count(b->second + tail)) {
      Target t = global(b->second + tail, depth + 1);
      if (t.kind == Target::pending || !branches(top, name, tail, depth)) return make(Target::pending);
      return t;
    }
    circle = m.name + "." + name + " -> " + b->second + tail;
    circle_module = b->second;
  }
  if (auto a = m.aliases.find(name); a != m.aliases.end()) return in_scope(m, 0, a->second + tail, depth + 1);
  bool pending = false;
  if (m.is_package) {
    const ModuleFacts* sub = module_named(m.name + "." + name, pending);
    if (pending) return make(Target::pending);
    if (sub) return last ? make(Target::module, sub, -1) : attr(*sub, parts, i + 1, depth + 1);
  }
  bool found = false;
  std::string compiled;                  // a star source with no source file: a C extension
  Target guess = make(Target::missing);  // a star source's own compiled guess
  Target star = through_stars(m, parts, i, depth, found, compiled, guess);
  if (found) return star;
  if (!circle.empty()) return circle_end(circle, circle_module, tail);
  return undefined(m, parts, i, depth, compiled, guess);
}

Target Resolver::defined_function(const ModuleFacts& m, const std::string& name, bool last, int index,
                                  int depth) {
  const Function& top = m.functions[0];
  if (!last) return make(Target::unknown, "attribute of function " + m.name + "." + name);
  // `try: from ._C import f` / `except ImportError: def f(): ...`: both may run.
  if (auto b = top.imports.find(name); b != top.imports.end() && !active_.count(b->second)) {
    Target t = global(b->second, depth + 1);
    if (t.kind == Target::pending) return t;
    if (t.kind == Target::function || t.kind == Target::klass || t.kind == Target::external) also.push_back(t);
  }
  if (!branches(top, name, "", depth)) return make(Target::pending);
  return make(Target::function, &m, index);
}

Target Resolver::through_stars(const ModuleFacts& m, const std::vector<std::string>& parts, size_t i, int depth,
                               bool& found, std::string& compiled, Target& guess) {
  // Ask for every star source at once: one wave, not one per `from m import *`.
  bool waiting = false;
  for (const auto& star : m.stars) {
    bool pending = false;
    const ModuleFacts* s = module_named(star, pending);
    waiting = waiting || pending;
    // A folder with no __init__.py beside a C extension of the same name (torch/_C/ of
    // .pyi stubs, torch/_C.so) is the extension to Python's import; a star import of a
    // true namespace package binds nothing anyway.
    bool folder_only = s && !s->file.empty() && s->file.back() == '/';
    if (!s || folder_only) {
      if (!pending && compiled.empty()) compiled = star;
      continue;
    }
    // `from m import *` binds what m exports: its __all__, or its public names.
    const std::string& name = parts[i];
    bool exported = s->exports == ModuleFacts::Exports::unknown ||
                    (s->exports == ModuleFacts::Exports::listed
                         ? std::find(s->all.begin(), s->all.end(), name) != s->all.end()
                         : name.empty() || name[0] != '_');
    if (!exported) continue;
    Target t = attr(*s, parts, i, depth + 1);
    if (t.kind == Target::pending) waiting = true;
    else if (t.kind == Target::external && t.index == kCompiledGuess) guess = t;
    else if (t.kind != Target::missing && t.kind != Target::lazy && !waiting) {
      found = true;
      return t;
    }
  }
  found = waiting;
  return make(Target::pending);
}

Target Resolver::circle_end(const std::string& circle, const std::string& circle_module, const std::string& tail) {
  // `from numpy.linalg import _umath_linalg` inside numpy.linalg: a submodule with no
  // source is compiled (a C extension), outside what the walk reads.
  size_t dot = circle_module.rfind('.');
  if (dot != std::string::npos) {
    bool pending = false;
    const ModuleFacts* parent = module_named(circle_module.substr(0, dot), pending);
    const ModuleFacts* bound = parent && parent->is_package ? module_named(circle_module, pending) : parent;
    if (pending) return make(Target::pending);
    if (parent && parent->is_package && !bound) return make(Target::external, circle_module + tail);
  }
  return make(Target::circular, circle);
}

Target Resolver::undefined(const ModuleFacts& m, const std::vector<std::string>& parts, size_t i, int depth,
                           const std::string& compiled, const Target& guess) {
  const Function& top = m.functions[0];
  const std::string& name = parts[i];
  std::string tail = tail_of(parts, i + 1);
  // `registry = Registry()` at module level, then registry.register(...) (or
  // registry.cache.clear(), through what the class says its attributes hold).
  if (auto ty = top.types.find(name); ty != top.types.end() && i + 2 <= parts.size() && !ty->second.empty()) {
    Target inst = instance(m, 0, ty->second, depth + 1);
    if (inst.kind == Target::pending) return inst;
    return chain_method(inst, parts, i + 1, depth);
  }
  if (top.is_local(name)) return make(Target::unknown, "module variable " + m.name + "." + name);
  // `from torch._C import *`, `from ._multiarray_umath import *`: presumably a name the
  // compiled module exports, outside the sources the walk reads. A guess, which a
  // module that star-imports this one takes only when no other source defines it. The
  // star import binds it before any call of the module's __getattr__ (`torch.device`
  // is torch._C's, not a lazy export of torch).
  if (!compiled.empty() && !(i == 0 && python_builtin(name))) {
    Target t = make(Target::external, compiled + "." + name + tail);
    t.index = kCompiledGuess;
    t.compiled = compiled;
    return t;
  }
  // PEP 562: a module's __getattr__ makes the names it does not define.
  // Only for attributes read from outside (i > 0): inside the module, a name it does
  // not bind is a builtin.
  if (auto g = top.defs.find("__getattr__"); i > 0 && g != top.defs.end()) {
    Target t = make(Target::lazy, &m, g->second);
    t.name = m.name + "." + name;
    return t;
  }
  return guess;
}

Target Resolver::in_scope(const ModuleFacts& m, int fn, const std::string& dotted, int depth) {
  if (depth > kMaxDepth) return make(Target::circular, m.name + ":" + dotted);
  auto parts = util::split(dotted, '.');
  if (parts.size() == 2 && parts[1] == "[]") return item(m, fn, parts, depth);
  if (parts.size() >= 2 && parts.back() == "[getattr]") return any_attribute(m, fn, dotted, depth);
  const std::string& head = parts[0];
  for (int f = fn; f > 0; f = m.functions[f].parent) {
    const Function& F = m.functions[f];
    if (F.cls >= 0 && !F.self_name.empty() && head == F.self_name) {
      // The receiver's class when the walk knows it, else the class defining the method.
      bool known = self_as.cls_mod && self_as.mod == &m && self_as.fn == f;
      const ModuleFacts& cm = known ? *self_as.cls_mod : m;
      int ci = known ? self_as.cls : F.cls;
      // `self.a.b.m()`: through what the class (and then each attribute's class) says
      // its attributes hold.
      if (parts.size() >= 3) return chain_method(make(Target::klass, &cm, ci), parts, 1, depth);
      if (parts.size() == 1) return make(Target::unknown, head + " itself, whose class may be a subclass");
      Target t = method(cm, ci, parts[1], depth + 1);
      if (Target g; through_getattr(cm, ci, parts[1], t, depth, g)) return g;
      if (t.kind == Target::missing) return make(Target::unknown, "attribute of " + head + ", not a method");
      // Inherited from a class outside, or an attribute the code set: the walk flags
      // it where a rule names it, and counts it otherwise.
      if (t.kind == Target::external) t.index = kInherited;
      if (known && t.kind == Target::function) t.recv_mod = &cm, t.recv_cls = ci;
      return t;
    }
    if (auto b = F.imports.find(head); b != F.imports.end()) {
      Target t = global(b->second + tail_of(parts, 1), depth + 1);
      if (t.kind == Target::pending || !branches(F, head, tail_of(parts, 1), depth)) return make(Target::pending);
      return t;
    }
    if (auto d = F.defs.find(head); d != F.defs.end()) {
      if (parts.size() == 1) return make(Target::function, &m, d->second);
      return make(Target::unknown, "attribute of a local function");
    }
    if (auto ty = F.types.find(head); ty != F.types.end() && parts.size() == 1 && ty->second.rfind("each:", 0) == 0)
      return item(m, f, {ty->second.substr(5), "[]"}, depth + 1);  // `for fn in REGISTRY: fn()`
    if (auto ty = F.types.find(head); ty != F.types.end() && parts.size() >= 2 && util::starts_with(ty->second, "attr:"))
      return submodule_attribute(m, f, ty->second.substr(5), parts, depth);
    if (auto ty = F.types.find(head); ty != F.types.end() && parts.size() >= 2 && !ty->second.empty()) {
      Target inst = instance(m, f, ty->second, depth + 1);
      if (inst.kind == Target::pending) return inst;
      return chain_method(inst, parts, 1, depth);
    }
    if (const Target* p = passed(m, f, head); p && parts.size() >= 2) return chain_method(*p, parts, 1, depth);
    if (Target c; parts.size() == 1 && called_value(m, f, head, depth, c)) return c;
    if (F.is_local(head)) return make(Target::unknown, parts.size() == 1 ? "a local variable" : "method of an unknown object");
  }
  Target t = attr(m, parts, 0, depth + 1);
  if (t.kind == Target::missing && util::ends_with(head, "[]"))
    return make(Target::unknown, "an item of " + head.substr(0, head.size() - 2) + ", whose class is not known");
  if (t.kind == Target::missing) {
    // Not bound anywhere in the module: a builtin (open, len) or a name Python would
    // not find either.
    return make(Target::external, dotted);
  }
  return t;
}

Target Resolver::instance(const ModuleFacts& m, int fn, const std::string& how, int depth) {
  if (depth > kMaxDepth) return make(Target::circular, m.name + ":" + how);
  if (how.find('|') != std::string::npos) return either(m, fn, how, depth + 1);
  if (how.size() < 6) return make(Target::unknown, "assigned more than one kind of value");
  if (how.compare(0, 5, "expr:") == 0) return value_of(m, fn, how.substr(5), depth + 1);
  if (how.compare(0, 5, "each:") == 0) return element_of(m, fn, how.substr(5), depth + 1);
  std::string what = how.substr(5);
  Target t = in_scope(m, fn, what, depth + 1);
  if (t.kind == Target::klass) t.exact = how[0] == 'c';  // made by calling the class
  if (t.kind == Target::pending || t.kind == Target::klass) return t;
  if (t.kind == Target::external && how[0] == 't' && opaque_class(t.name))
    return make(Target::unknown, what + " is annotated as " + t.name + ", which says nothing of its methods");
  if (t.kind == Target::external) {
    // pathlib.Path, filelock.FileLock, ...; Path.home() makes a Path, not a "home".
    std::string made = how[0] == 'c' ? external_result(t.name) : "";
    if (!made.empty()) return make(Target::external, made);
    if (how[0] == 'c' && !external_class(t.name))
      return make(Target::unknown, "what " + t.name + "() returns is not known");
    return t;
  }
  if (how.compare(0, 5, "call:") == 0 && t.kind == Target::function) return returned(*t.mod, t.index, depth + 1);
  return make(Target::unknown, "what " + what + (how[0] == 'c' ? "() returns" : " is") + " is not known");
}

Target Resolver::returned(const ModuleFacts& m, int fn, int depth) {
  const Function& F = m.functions[fn];
  if (F.returns.empty())
    return make(Target::unknown, "what " + m.name + "." + F.qualified + "() returns is not annotated");
  // The annotation names a class as the function's own code would see it.
  Target t = in_scope(m, fn, F.returns, depth + 1);
  // What its returns make counts only when it is a class of the environment: `return
  // object()` says nothing of the methods called on the result.
  if (F.returns_inferred && t.kind != Target::pending && t.kind != Target::klass)
    return make(Target::unknown, "what " + m.name + "." + F.qualified + "() returns is not annotated");
  if (t.kind == Target::external && opaque_class(t.name))
    return make(Target::unknown, m.name + "." + F.qualified + "() returns " + t.name + ", which says nothing of its methods");
  if (t.kind == Target::pending || t.kind == Target::klass || t.kind == Target::external) return t;
  return make(Target::unknown, m.name + "." + F.qualified + "() returns " + F.returns + ", which is not a class");
}

Target Resolver::method_of(const Target& inst, const std::string& name, int depth) {
  if (inst.kind == Target::external) return make(Target::external, inst.name + "." + name);
  if (inst.kind != Target::klass) return inst;
  Target t = method(*inst.mod, inst.index, name, depth + 1);
  if (Target g; through_getattr(*inst.mod, inst.index, name, t, depth, g)) return g;
  if (t.kind == Target::missing) return make(Target::external, "");
  if (t.kind == Target::function && inst.exact) t.recv_mod = inst.mod, t.recv_cls = inst.index;
  return t;
}

bool Resolver::through_getattr(const ModuleFacts& m, int cls, const std::string& name, const Target& found,
                               int depth, Target& out) {
  if (found.kind != Target::missing && found.kind != Target::external) return false;
  if (name.size() > 4 && name.compare(0, 2, "__") == 0 && name.compare(name.size() - 2, 2, "__") == 0) return false;
  Target g = method(m, cls, "__getattr__", depth + 1);
  if (g.kind != Target::function) return false;
  out = g;
  out.kind = Target::lazy;
  out.name = m.name + "." + m.classes[cls].qualified + "." + name;
  return true;
}

Target Resolver::method(const ModuleFacts& m, int cls, const std::string& name, int depth) {
  if (depth > kMaxDepth) return make(Target::circular, m.name + "." + m.classes[cls].qualified + "." + name);
  const Class& c = m.classes[cls];
  if (auto it = c.methods.find(name); it != c.methods.end()) return make(Target::function, &m, it->second);
  return in_bases(m, cls, name, depth);
}

Target Resolver::item(const ModuleFacts& m, int fn, const std::vector<std::string>& parts, int depth) {
  const std::string& head = parts[0];
  const ModuleFacts* where = nullptr;  // the module and function whose code fills it
  int in = 0;
  std::string how;
  std::string imported;
  for (int f = fn; f >= 0 && !where && imported.empty(); f = f > 0 ? m.functions[f].parent : -1) {
    const Function& F = m.functions[f];
    if (auto t = F.types.find(head); t != F.types.end()) {
      where = &m;
      in = f;
      how = t->second;
    } else if (auto b = F.imports.find(head); b != F.imports.end()) {
      imported = b->second;
    } else if (f > 0 && F.is_local(head)) {
      break;
    }
  }
  if (!imported.empty()) {
    // `from .registry import builders`: the dict is a variable of that module.
    size_t dot = imported.rfind('.');
    if (dot != std::string::npos) {
      bool pending = false;
      const ModuleFacts* src = module_named(imported.substr(0, dot), pending);
      if (pending) return make(Target::pending);
      if (src) {
        const Function& top = src->functions[0];
        if (auto t = top.types.find(imported.substr(dot + 1)); t != top.types.end()) {
          where = src;
          how = t->second;
        }
      }
    }
  }
  if (!where || how.compare(0, 6, "items:") != 0)
    return make(Target::unknown, "an item of " + head + ", whose items are not known");
  Target first = make(Target::unknown, "an item of " + head + ", whose items are not functions or classes");
  for (const auto& value : util::split(how.substr(6), ',')) {
    Target t = in_scope(*where, in, value, depth + 1);
    if (t.kind == Target::pending) return t;
    if (t.kind != Target::function && t.kind != Target::klass && t.kind != Target::external) continue;
    if (first.kind == Target::unknown) first = t;
    else also.push_back(t);
  }
  return first;
}

Target Resolver::any_attribute(const ModuleFacts& m, int fn, const std::string& dotted, int depth) {
  std::string object = dotted.substr(0, dotted.size() - std::string(".[getattr]").size());
  Target t = in_scope(m, fn, object, depth + 1);
  if (t.kind == Target::pending) return t;
  if (t.kind != Target::module || !t.mod)
    return make(Target::unknown, "getattr with a name known only at run time, on " + object + ", which is not a module");
  std::vector<int> fns;
  for (size_t k = 1; k < t.mod->functions.size(); ++k) {
    const Function& F = t.mod->functions[k];
    auto def = t.mod->functions[0].defs.find(F.qualified);
    if (F.parent == 0 && F.cls < 0 && def != t.mod->functions[0].defs.end() && def->second == int(k))
      fns.push_back(int(k));
  }
  if (fns.empty()) return make(Target::unknown, "getattr with a name known only at run time, on module " + t.mod->name + ", which defines no function");
  if (fns.size() > kMaxAttributes)
    return make(Target::unknown, "getattr with a name known only at run time, on module " + t.mod->name + ": its " +
                                     std::to_string(fns.size()) + " functions are more than the " +
                                     std::to_string(kMaxAttributes) + " followed");
  for (size_t k = 1; k < fns.size(); ++k) also.push_back(make(Target::function, t.mod, fns[k]));
  return make(Target::function, t.mod, fns[0]);
}

Target Resolver::submodule_attribute(const ModuleFacts& m, int fn, const std::string& object,
                                     const std::vector<std::string>& parts, int depth) {
  std::string why = "an attribute of " + object + " named only at run time";
  Target t = in_scope(m, fn, object, depth + 1);
  if (t.kind == Target::pending) return t;
  if (t.kind != Target::module || !t.mod) return make(Target::unknown, why + ", and " + object + " is not a module");
  // A package hands out its submodules by name (`getattr(torch, "cuda")`): those it
  // binds under their own names. Every one is asked at once, so the walk loads the
  // missing ones in one round.
  std::string tail = tail_of(parts, 1);
  std::vector<Target> found;
  bool pending = false;
  for (const auto& [bound, target] : t.mod->functions[0].imports) {
    if (target != t.mod->name + "." + bound) continue;
    size_t branches_before = also.size();
    Target s = global(target + tail, depth + 1);
    if (s.kind == Target::pending) pending = true;
    if (s.kind == Target::function || (s.kind == Target::klass && s.mod)) found.push_back(s);
    else also.resize(branches_before);  // only a submodule that defines it brings its branches
  }
  if (pending) return make(Target::pending);
  if (found.empty())
    return make(Target::unknown, why + ": no submodule " + t.mod->name + " imports defines " + tail.substr(1));
  if (found.size() > kMaxAttributes)
    return make(Target::unknown, why + ": " + std::to_string(found.size()) + " submodules of " + t.mod->name +
                                     " define " + tail.substr(1) + ", more than the " + std::to_string(kMaxAttributes) +
                                     " followed");
  also.insert(also.end(), found.begin() + 1, found.end());
  return found[0];
}

Target Resolver::in_bases(const ModuleFacts& m, int cls, const std::string& name, int depth) {
  // Depth first, left to right: the MRO of the hierarchies packages usually have.
  // A base outside the environment (logging.Logger) may define it: its method, as the
  // standard library names it, once no base of the environment does.
  const Class& c = m.classes[cls];
  Target outside = make(Target::missing);
  for (const auto& base : c.bases) {
    Target b = in_scope(m, c.scope, base, depth + 1);
    if (b.kind == Target::pending) return b;
    if (b.kind == Target::external && outside.kind == Target::missing && !b.name.empty() && !opaque_class(b.name))
      outside = make(Target::external, b.name + "." + name);
    if (b.kind != Target::klass) continue;
    Target t = method(*b.mod, b.index, name, depth + 1);
    if (t.kind != Target::missing) return t;
  }
  return outside;
}

Target Resolver::super_method(const ModuleFacts& m, int fn, const std::string& name, int depth) {
  int f = fn;
  while (f > 0 && m.functions[f].cls < 0) f = m.functions[f].parent;
  if (f <= 0) return make(Target::unknown, "super() outside a method");
  Target t = in_bases(m, m.functions[f].cls, name, depth);
  if (t.kind == Target::missing) return make(Target::unknown, "super()." + name + " not found in the bases");
  return t;
}

std::string spelled(const ModuleFacts& m, int fn, const std::string& dotted, int depth) {
  if (depth > kMaxDepth) return dotted;
  size_t dot = dotted.find('.');
  std::string head = dotted.substr(0, dot);
  std::string tail = dot == std::string::npos ? "" : dotted.substr(dot);
  for (int f = fn; f > 0; f = m.functions[f].parent) {
    const Function& F = m.functions[f];
    if (auto b = F.imports.find(head); b != F.imports.end()) return b->second + tail;
    if (F.defs.count(head)) return m.name + "." + F.qualified + "." + dotted;
    if (F.is_local(head)) return "";
  }
  const Function& top = m.functions[0];
  if (auto b = top.imports.find(head); b != top.imports.end()) return b->second + tail;
  if (auto a = m.aliases.find(head); a != m.aliases.end() && a->second.compare(0, head.size() + 1, head + ".") != 0 &&
                                     a->second != head)
    return spelled(m, 0, a->second, depth + 1) + tail;
  if (top.defs.count(head) || m.class_names.count(head)) return m.name + "." + dotted;
  if (top.is_local(head)) return "";
  return dotted;
}

std::vector<std::string> other_spellings(const ModuleFacts& m, int fn, const std::string& dotted) {
  std::vector<std::string> out;
  // Most scopes bind each name once: then there is nothing to add (and this runs for
  // every call a scan reads).
  bool branches = false;
  for (int f = fn; f >= 0 && !branches; f = f > 0 ? m.functions[f].parent : -1)
    branches = !m.functions[f].other_imports.empty();
  if (!branches) return out;
  size_t dot = dotted.find('.');
  std::string head = dotted.substr(0, dot);
  std::string tail = dot == std::string::npos ? "" : dotted.substr(dot);
  // The scope that binds the head, as spelled() found it.
  for (int f = fn; f >= 0; f = f > 0 ? m.functions[f].parent : -1) {
    const Function& F = m.functions[f];
    if (F.imports.count(head)) {
      if (auto o = F.other_imports.find(head); o != F.other_imports.end())
        for (auto& target : o->second)
          if (std::find(out.begin(), out.end(), target + tail) == out.end()) out.push_back(target + tail);
      break;
    }
    if (f > 0 && (F.defs.count(head) || F.is_local(head))) break;
  }
  return out;
}

}  // namespace sitepatch::audit::detail
