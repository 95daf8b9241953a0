#pragma once
// The value-flow analysis's view of one module: each scope's code lowered from one parse
// into a few kinds of instructions over variables (flow/lower*.cpp), the tree freed at
// once. A local assigned twice is two variables (flow-sensitive inside a scope, where that
// is cheap: straight-line code, with a join after each branch); what a nested scope reads of
// an enclosing one, and what any function reads of the module, is the name's summary: every
// value it is ever given. The solver (flow/solver*.cpp) moves abstract values along these
// instructions to a fixpoint.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "audit/flow/name.hpp"

namespace sitepatch::audit::flow {

using Var = uint32_t;  // index into Module::vars (per module; the solver offsets it)
constexpr Var kNoVar = UINT32_MAX;

enum class Op : uint8_t {
  copy,         // dst = a
  constant,     // dst = a constant: name = "None", "True", "False", "int", "str:<text>", "float", "bytes"
  unknown,      // dst = a value this analysis does not model (counted where it is called)
  function,     // dst = scope `index` (a def or lambda, its defaults copied to its parameters)
  klass,        // dst = class `index`
  import,       // dst = module `name` (import a.b binds a: name "a", and loads nothing)
  import_from,  // dst = attribute `name2` of module `name` (`from m import n`), or its submodule m.n
  load_attr,    // dst = a.name
  store_attr,   // a.name = b
  load_item,    // dst = a[b] (name: the literal key, "" when none)
  store_item,   // a[b] = c... stored as a[name or any] = b
  make_list,    // dst = a new list/tuple/set/dict at this site: index into Module::containers
  call,         // dst = call `index` into Module::calls
  iterate,      // dst = an item of iterating a (for, comprehension, unpacking by *): __iter__, __next__
  unpack,       // dst = item `index` of a (tuple unpacking; index -1: a starred target)
  enter,        // dst = what `with a as dst` binds: __enter__ (and __exit__)
  binary,       // dst = a <op> b: the dunder `name` of a (and the reflected one of b)
  truth,        // `if a:` on an instance: __bool__, else __len__
  implicit,     // a.<name>() called by Python with no result kept (__hash__, __str__, __contains__, ...)
  ret,          // the scope returns a
  yield,        // the scope yields a (dst: what `yield` evaluates to, from send)
  yield_from,   // the scope yields every item of a (dst: its return value)
  await,        // dst = the result of awaiting a
  raise,        // raise a (a class: its constructor runs)
  super_,       // dst = super() in scope `index` (its class and first parameter)
  star_import,  // the names of module `name` (from m import *): read when a name is not bound
};

struct Instr {
  Op op = Op::copy;
  Var dst = kNoVar, a = kNoVar, b = kNoVar;
  int32_t index = -1;       // scope, class, call, container or tuple position
  uint32_t guard = 0;       // index into Module::guards; 0 = always runs
  int line = 0, column = 0;  // 1-based; column in bytes
  Name name, name2;  // interned: the lowered code of every module read is kept
};

/// When a guarded instruction runs: every test from `guard` up its parents passes.
struct Guard {
  // `either`: one of two guards, `alt` (each a chain of its own up to this one's parent):
  // `a or b` true, `a and b` false.
  enum Test : uint8_t { truthy, falsy, is_none, not_none, equals, not_equals, one_of, none_of, either };
  uint32_t parent = 0;  // 0: none
  Var var = kNoVar;
  Test test = truthy;
  Name literal;  // for equals / not_equals: a constant as Op::constant names it
  std::vector<std::string> among;  // for one_of / none_of (`x in ("a", "b")`): the constants
  uint32_t alt[2] = {0, 0};        // for either
};

struct Arg {
  Var var = kNoVar;
  Name keyword;      // "" for a positional argument
  uint8_t star = 0;  // 1: *args, 2: **kwargs
};

struct Call {
  Var callee = kNoVar;
  std::vector<Arg> args;
  Name text;  // the callee as written ("subprocess.run", "self.load"): messages and rules
};

struct Container {
  enum Kind : uint8_t { list, tuple, set, dict };
  Kind kind = list;
  // Items in order (a tuple's positions); for a dict, the values, `keys` their literal keys
  // ("" for a key that is no literal). A starred item spreads its items.
  std::vector<Var> items;
  std::vector<std::string> keys;
  std::vector<Var> key_vars;  // a dict's keys that are no literal (their values decide), else kNoVar
  std::vector<uint8_t> starred;
};

struct Param {
  std::string name;
  Var var = kNoVar;
  enum Kind : uint8_t { positional, keyword_only, star, star_star } kind = positional;
  Var default_value = kNoVar;  // in the scope that defines the function
};

struct Scope {
  enum Kind : uint8_t { module, function, lambda };
  Kind kind = module;
  std::string qualified;  // "f", "Cls.m", "f.<lambda1>"; "" for the module's top level
  int parent = -1;        // enclosing scope (-1: the module's top level has none)
  int cls = -1;           // the class whose body defines it (a method), -1 for none
  int line = 0, end_line = 0;
  std::vector<Param> params;
  Var returns = kNoVar;   // every value it returns (None when it can fall off its end)
  Var yields = kNoVar;    // every value it yields
  Var sent = kNoVar;      // what `send` gives (unknown)
  bool generator = false, coroutine = false;
  bool is_property = false, is_staticmethod = false, is_classmethod = false;
  bool abstract = false;  // @abstractmethod, or a body of only `raise NotImplementedError`
  std::vector<Instr> code;
  // Names of enclosing scopes this scope reads: name -> that scope's summary var.
};

struct Class {
  std::string qualified;
  int scope = 0;               // the scope whose code runs its class statement
  int line = 0;
  std::vector<Var> bases;      // vars of the scope above, in order
  std::vector<std::string> base_text;  // as written, for messages
  Var metaclass = kNoVar;
  std::map<std::string, Var> attrs;  // what its body binds: methods, class attributes
  // `x: list = field(default_factory=make)`: what a generated __init__ calls (dataclasses,
  // attrs' `factory=`, pydantic's Field).
  std::vector<Var> factories;
};

struct Module {
  std::string name;
  bool is_package = false;
  std::string file, root;
  std::vector<Scope> scopes;  // [0]: the top level
  std::vector<Class> classes;
  std::vector<Guard> guards{Guard{}};  // [0]: none
  std::vector<Call> calls;
  std::vector<Container> containers;
  std::map<std::string, Var> globals;  // each module-level name's summary var
  uint32_t vars = 0;                   // how many vars the module's code uses
  std::vector<std::string> all;        // __all__ when written as literal strings
  bool all_listed = false;
  /// Whether `from <this> import *` binds `name`: __all__'s names, else the public ones.
  bool exports(const std::string& name) const {
    if (all_listed) return std::find(all.begin(), all.end(), name) != all.end();
    return !name.empty() && name[0] != '_';
  }
  int syntax_errors = 0;
  std::string compiled;  // the compiled twin import loads instead ("" when the source runs)
};

/// 1 for a generic of items (typing.List, list, Sequence...), 2 for one of values (Dict,
/// Mapping...), 0 for any other name.
int generic_collection(const std::string& dotted);

/// Parses `source` once and lowers every scope. `module` and `is_package` resolve
/// relative imports. Never throws on odd code: what it cannot read becomes Op::unknown.
Module lower(std::string_view source, const std::string& module, bool is_package);

/// lower(), or the module as it was lowered before with the same text once
/// keep_lowered(true) was called (flow.hpp): lowering is half of a walk.
Module lower_kept(std::string_view source, const std::string& module, bool is_package);

}  // namespace sitepatch::audit::flow
