#pragma once
// The value-flow solver: abstract values moved along the lowered instructions of every
// module the entry reaches, to a fixpoint. Demand-driven: a scope's instructions run only
// once something calls it (a module's top level once something imports from it and reads
// a name), and a module is lowered only when a value from it is used. Context-insensitive
// (one set of values per variable), field-based for instances (one variable per class and
// attribute), one abstract container per site. Each instruction is evaluated again, whole,
// whenever a variable it read grows; what it adds is kept in sets, so evaluating twice
// changes nothing.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "audit/flow/ir.hpp"

namespace sitepatch::audit::flow {

/// Where modules come from: lowered on demand, once each.
class Source {
 public:
  virtual ~Source() = default;
  /// The module lowered, or nullopt when the environment has no Python source for it
  /// (the standard library is read as names, never lowered; a C extension; not installed).
  virtual std::optional<Module> load(const std::string& name) = 0;
  /// Whether a module load() had no source for is compiled (a twin import loads instead).
  virtual bool compiled(const std::string& /*name*/) const { return false; }
  /// Modules of `packages` that may subclass one of `classes` (ModuleTexts::subclassing).
  virtual std::vector<std::string> subclassing(const std::vector<std::string>& /*packages*/,
                                               const std::vector<std::string>& /*classes*/) {
    return {};
  }
};

enum class Kind : uint8_t {
  module,       // a: module name (string id)
  function,     // a: scope id
  klass,        // a: class id
  instance,     // a: class id
  bound,        // a: scope id, b: receiver value
  container,    // a: container id
  view,         // a: container id, b: 0 keys, 1 values, 2 items
  cmethod,      // a: container value, b: method name (string id)
  constant,     // a: string id ("None", "True", "str:linux", "int", "bool", ...)
  external,     // a: dotted name (string id) of something outside the program
  ext_instance, // a: dotted class name (string id) outside the program
  super_,       // a: class id, b: receiver value
  partial,      // a: call id of the functools.partial(...) that made it
  generator,    // a: scope id (a generator or coroutine function's call)
  constructor,  // a: class id: type.__call__ for it (its __new__ and __init__, no metaclass)
  lazy,         // a: module name, b: attribute (string ids): `from a import b`, read when used
  module_any,   // a: module name: getattr(module, name) with a name known only at run time
  unknown,
};

struct Value {
  Kind kind = Kind::unknown;
  uint32_t a = 0, b = 0;
  bool operator==(const Value& o) const { return kind == o.kind && a == o.a && b == o.b; }
};

/// A call the solver followed: from a scope (a function, or a module's top level) to a
/// function, at a line of the caller.
struct FlowEdge {
  uint32_t from = 0, to = 0;  // scope ids
  int line = 0;
};

/// A call out of the program (the standard library, a builtin, a C extension) a reached
/// scope makes: what rules judge.
struct ExternalCall {
  uint32_t scope = 0;
  int line = 0, column = 0;
  std::string name;  // dotted: "subprocess.run", "threading.Lock.__enter__"
  std::string text;  // as written
};

/// A reached call whose callee no value is known for.
struct Unfollowed {
  uint32_t scope = 0;
  int line = 0;
  std::string text;
  std::string why;
  bool limit = false;  // a limit of the analysis (an import circle), said without -v
};

/// A call in an arm that the literal arguments of every call reaching its function rule out
/// (`if need_lock:` where every caller passes need_lock=False): never made, said so.
struct RuledOutCall {
  uint32_t scope = 0;
  int line = 0;
  std::string text;                     // as written
  std::vector<std::string> externals;   // what it would call out of the program (dotted)
  std::vector<uint32_t> functions;      // the program's functions it would call (scope ids)
  std::string why;                      // "runs only if need_lock; every call passes need_lock=False"
};

/// Whether an outside name reads as a function (`subprocess.run`), not a constant
/// (`subprocess.PIPE`), a class (`subprocess.Popen`) or a module (`os.path`).
bool callable_name(const std::string& dotted);
/// Whether an outside name is an exception class (`subprocess.CalledProcessError`): making
/// one is no operation.
bool exception_name(const std::string& dotted);

class Solver {
 public:
  explicit Solver(Source& source);
  ~Solver();

  /// Reaches the top level of module `name`; false when the source has no such module.
  bool enter_module(const std::string& name);
  /// Reaches `qualified` in module `name` (a function or Class.method), its parameters
  /// given unknown values; false when there is no such function.
  bool enter_function(const std::string& name, const std::string& qualified, int line = 0);
  /// Runs to the fixpoint.
  void solve();

  // What the fixpoint holds.
  const std::vector<FlowEdge>& edges() const;
  const std::vector<ExternalCall>& external_calls() const;
  const std::vector<Unfollowed>& unfollowed() const;
  const std::vector<RuledOutCall>& ruled_out() const;
  std::vector<uint32_t> reached_scopes() const;
  /// A scope's module, qualified name ("" for a top level), file, lines.
  const Module& module_of(uint32_t scope) const;
  const Scope& scope(uint32_t scope) const;
  size_t modules_loaded() const;
  /// Whether the fixpoint was stopped at a limit of what it may hold (the answer is cut).
  bool cut() const;
  /// Whether the scope's module is the program's (the entry's, or a script's sibling).
  bool is_program(uint32_t scope) const;
  /// "via subclass pkg.mod.D" when `to` is a method of a subclass D of the class whose
  /// method `from` is (self's call dispatched past the class that makes it); else "".
  std::string via(uint32_t from, uint32_t to);
  /// Whether an external name is a method an instance's base from outside may define (its
  /// class defines no such name).
  bool inherited_guess(const std::string& dotted) const;
  /// Whether an external name is one a star import of a compiled module may have bound.
  bool star_made(const std::string& dotted) const;

  struct Impl;

 private:
  void solve_once();
  uint32_t pick_definition(uint32_t module, const std::string& qualified);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sitepatch::audit::flow
