#pragma once
// Private to src/audit: what a name used in a function stands for, looked up the way
// Python binds it (the function's scopes, the module, its imports and re-exports,
// submodules, `from m import *`), across modules loaded on demand.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sitepatch/audit/facts.hpp"

namespace sitepatch::audit::detail {

struct Target {
  enum Kind {
    function,  // mod + index: a function in the environment
    klass,     // mod + index: a class (calling it runs __init__)
    module,    // mod
    external,  // name: outside the environment (stdlib, a builtin, a C extension)
    unknown,   // name: why it cannot be resolved statically
    missing,   // not defined where it was looked for
    pending,   // a module must be loaded first (Resolver::wanted)
    circular,  // name: the lookup came back to a name it was resolving (a limit of this tool)
    lazy,      // mod + index: a module's __getattr__ provides the name at run time
  };
  Kind kind = unknown;
  const ModuleFacts* mod = nullptr;
  int index = -1;
  std::string name;
  // A method reached through a receiver whose class is known (`Cls().m()`, `x.m()` with
  // x's class known, `self.m()` where self's is): that class. Null when not known.
  const ModuleFacts* recv_mod = nullptr;
  int recv_cls = -1;
  // A klass that is the exact class of an instance (made by calling it), not an
  // annotation's, which a subclass's instance satisfies too.
  bool exact = false;
  std::string compiled;  // kCompiledGuess: the compiled module whose star import binds it
};

/// The class `self` has inside one function of the walk (its receiver's), when known.
struct SelfAs {
  const ModuleFacts* mod = nullptr;  // the function's module and index
  int fn = -1;
  const ModuleFacts* cls_mod = nullptr;
  int cls = -1;
};

/// Target::index of an external target that only a compiled star import suggests.
constexpr int kCompiledGuess = -2;

/// Target::index of an external target reached through an import of a module the
/// environment has no Python file for (the standard library, a compiled extension, or a
/// module not installed: the walk asks its ModuleSource which).
constexpr int kNoModuleFile = -3;

/// Target::index of an external target that is `self.name` where no class of the
/// environment defines name but a base outside it may (`self.info()` in a subclass of
/// logging.Logger), or the code set it as an attribute at run time.
constexpr int kInherited = -4;

class Resolver {
 public:
  /// Loaded modules by name; nullopt for a name the environment has no module for.
  std::map<std::string, std::optional<ModuleFacts>> modules;
  /// A module not in `modules` is outside the environment, never pending: a scan reads
  /// one file and names what the others define as a user of them would spell it.
  bool closed = false;
  /// Modules a lookup needed and did not find loaded (and not known missing).
  std::set<std::string> wanted;
  /// Where the other branches of the last lookups lead (a name imported in both arms of
  /// a try/except or if/else): the walk follows them too, and clears this first.
  std::vector<Target> also;
  /// Set by the walk while it reads a method reached through a receiver of a known class.
  SelfAs self_as;
  /// Set by the walk while it reads a function whose callers pass values the code shows:
  /// what each such parameter (not annotated) holds, for function `params_fn` of `params_mod`.
  const std::map<std::string, Target>* params = nullptr;
  const ModuleFacts* params_mod = nullptr;
  int params_fn = -1;

  /// A dotted name as used inside function `fn` of `m` (`self.x`, `np.load`, `open`).
  Target in_scope(const ModuleFacts& m, int fn, const std::string& dotted, int depth = 0);
  /// An absolute dotted name ("pkg.mod.Cls.method").
  Target global(const std::string& dotted, int depth = 0);
  /// Method `name` of class `cls` of `m`, or of its bases.
  Target method(const ModuleFacts& m, int cls, const std::string& name, int depth = 0);
  /// What the value `how` (Function::types: "call:X", "type:X") describes, seen from
  /// function `fn`: a class of the environment (klass) or one outside it (external,
  /// named), else unknown or pending.
  Target instance(const ModuleFacts& m, int fn, const std::string& how, int depth = 0);
  /// What each item of `dotted` holds (its "name[]" type, here or in the module that
  /// defines it), or why it is not known.
  Target element_of(const ModuleFacts& m, int fn, const std::string& dotted, int depth = 0);
  /// "call:A|expr:b": a name assigned in more than one place holds one class only when
  /// every assignment makes the same one.
  Target either(const ModuleFacts& m, int fn, const std::string& how, int depth);
  /// What calling a local or parameter calls: `container = _open_file; container(p)`,
  /// a function or class its caller passed. Null when nothing says.
  bool called_value(const ModuleFacts& m, int f, const std::string& name, int depth, Target& out);
  /// The class function `fn` of `m` is annotated to return (-> X), as instance().
  Target returned(const ModuleFacts& m, int fn, int depth = 0);
  /// What a value spelled as Extractor::value_steps spells it ("Path().resolve().parent")
  /// is, seen from function `fn`: as instance().
  Target value_of(const ModuleFacts& m, int fn, const std::string& steps, int depth = 0);
  /// What the head name of value_of's steps holds: a local, a parameter, `self`, an
  /// item ("dirs[]"), or a module's variable (then its name is taken off `after`).
  Target named_value(const ModuleFacts& m, int fn, const std::string& head, std::string& after, int depth);
  /// What the walk says callers pass for parameter `name` of function `fn` of `m`, if anything.
  const Target* passed(const ModuleFacts& m, int fn, const std::string& name) const;
  /// What calling method `name` of what instance() found returns (its annotation; for a
  /// class outside, known_types).
  Target method_result(const Target& instance, const std::string& name, int depth = 0);
  /// Method `name` of what instance() or returned() found.
  Target method_of(const Target& instance, const std::string& name, int depth = 0);
  /// Where looking up `name` on class `cls` found nothing in the environment (`found`
  /// missing, or a class outside's), a `__getattr__` of the class makes it at run time:
  /// that function as a lazy target named "mod.Cls.name".
  bool through_getattr(const ModuleFacts& m, int cls, const std::string& name, const Target& found, int depth,
                       Target& out);
  /// `super().name` inside function `fn`.
  Target super_method(const ModuleFacts& m, int fn, const std::string& name, int depth = 0);

 private:
  Target attr(const ModuleFacts& m, const std::vector<std::string>& parts, size_t i, int depth);
  // attr()'s steps, in the order it tries them.
  Target defined_function(const ModuleFacts& m, const std::string& name, bool last, int index, int depth);
  /// `found` false when no star source defines the name; `compiled` and `guess` collect
  /// what a source-less star source may export.
  Target through_stars(const ModuleFacts& m, const std::vector<std::string>& parts, size_t i, int depth,
                       bool& found, std::string& compiled, Target& guess);
  Target circle_end(const std::string& circle, const std::string& circle_module, const std::string& tail);
  Target undefined(const ModuleFacts& m, const std::vector<std::string>& parts, size_t i, int depth,
                   const std::string& compiled, const Target& guess);
  /// Method `parts.back()` of what reading the attributes parts[from..] (all but the
  /// last) of `inst` gives, one attribute after the other (`self.a.b.m()`); where an
  /// attribute may hold several classes, the method of each (the others in `also`).
  Target chain_method(Target inst, const std::vector<std::string>& parts, size_t from, int depth);
  /// The first of attribute_values().
  Target attribute_of(const Target& inst, const std::string& attr, int depth);
  /// What reading `attr` of an instance of `inst` (klass or external) may give, never
  /// empty: a property's return annotation (the property, which reading runs, goes to
  /// `also`), or what attribute_types() finds, or why it is not known.
  std::vector<Target> attribute_values(const Target& inst, const std::string& attr, int depth);
  /// What class `cls` (or, failing that, its bases) says attribute `attr` holds, each
  /// thing it says (Class::attr_types); empty when it says nothing.
  std::vector<Target> attribute_types(const ModuleFacts& m, int cls, const std::string& attr, int depth);
  /// `d[k]` (parts: d, "[]") where d is a dict or list literal of names: its first
  /// item, the others in `also`.
  Target item(const ModuleFacts& m, int fn, const std::vector<std::string>& parts, int depth);
  /// `getattr(module, name)` ("module.[getattr]"): each function the module defines,
  /// the first one returned and the others in `also`.
  Target any_attribute(const ModuleFacts& m, int fn, const std::string& dotted, int depth);
  /// `x = getattr(pkg, name); x.f()` (parts: x, f): f of each submodule pkg binds under
  /// its own name that defines it (torch.cuda, torch.xpu), the others in `also`.
  Target submodule_attribute(const ModuleFacts& m, int fn, const std::string& object,
                             const std::vector<std::string>& parts, int depth);
  /// Method `name` in the bases of class `cls` (not the class itself).
  Target in_bases(const ModuleFacts& m, int cls, const std::string& name, int depth);
  /// The module, pending, or nullptr when the environment has none.
  const ModuleFacts* module_named(const std::string& name, bool& pending);
  /// The other bindings of `name` in `F` (other_imports), each resolved + `tail` into `also`;
  /// false when one needs a module loaded first.
  bool branches(const Function& F, const std::string& name, const std::string& tail, int depth);

  std::set<std::string> active_;  // absolute names being resolved: meeting one again is a circle
};

/// What the use `ref` in function `fn` of `m` leads to, before anything is followed:
/// the one view of a call that the walk and the scan share (receiver types included).
/// `also` gets the other branches.
Target call_target(Resolver& r, const ModuleFacts& m, int fn, const Ref& ref);

/// The called name spelled through the imports of `fn`'s scopes: `from subprocess
/// import Popen; Popen()` -> "subprocess.Popen"; a module's own function -> "pkg.mod.f";
/// a builtin stays as written. "" when its head is a local variable.
std::string spelled(const ModuleFacts& m, int fn, const std::string& dotted, int depth = 0);

/// The same name through each other binding of its head than the one spelled() used
/// (the other branches of a try/except or if/else import); empty for most names.
std::vector<std::string> other_spellings(const ModuleFacts& m, int fn, const std::string& dotted);

}  // namespace sitepatch::audit::detail
