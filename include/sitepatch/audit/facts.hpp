#pragma once
// What audit needs to know about one module, extracted from one parse: its imports,
// functions, classes, and every name each function calls or uses as a value. The
// tree is freed as soon as these are read; the analysis runs on facts alone.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace sitepatch::audit {

/// One use of a name inside a function.
struct Ref {
  enum Kind : uint8_t {
    call,       // name(...)
    value,      // a function passed, stored in a list or dict, or returned: it may be called
    decorator,  // @name on the function: its wrapper runs when the function is called
    dynamic,    // a call whose callee is no name (getattr(...)(), x[i](), f()()): `name` is its text
    entered,    // `with name:`: its __enter__ runs
  };
  std::string name;      // dotted as written ("open", "self.load", "x.y.z")
  int line = 0;          // 1-based
  int column = 0;        // 1-based, in bytes
  Kind kind = call;
  bool on_result = false;  // `Path(p).read_text()`: name is "Path.read_text", the head was called
  bool raised = false;     // `raise X(...)`: an exception made to be raised, not an operation
  bool stored = false;     // `x = name`: a value given another name, not yet used
  // `if self.ready:`, `x in logging._levelToName`: an attribute read in an expression,
  // which runs only a property (no rule flags a read).
  bool read = false;
  // A call's arguments whose value the code shows: "#0=call:Path" (made by calling
  // Path), "root=of:self.root" (what a name holds); joined by spaces; "" for none. The
  // walk gives them to the callee's parameters (one level).
  std::string values;
};

/// A function; functions[0] of a module is its top level (the code import runs).
struct Function {
  std::string qualified;            // "f", "Cls.method", "outer.inner"; "" for the top level
  int line = 0;                     // of `def` (decorators excluded)
  int end_line = 0;                 // its last line
  int parent = -1;                  // enclosing function (closures), -1 for none
  int cls = -1;                     // the class it is a method of, -1 for none
  std::string self_name;            // a method's first parameter ("self", "cls"), "" otherwise
  std::vector<std::string> locals;  // sorted: parameters and names assigned in it
  std::map<std::string, std::string> imports;  // bound name -> absolute dotted target (the first binding)
  // Later bindings of an imported name to another target (try/except ImportError,
  // if/else, `if TYPE_CHECKING:`): which one runs is not known statically, so every
  // branch is followed.
  std::map<std::string, std::vector<std::string>> other_imports;
  std::map<std::string, int> defs;  // functions defined directly in it, by name
  // What a local (or, in functions[0], a module variable) holds, when one assignment or
  // annotation says: "call:X" (the result of calling X: an instance of class X, or
  // what function X's return annotation names) or "type:X" (annotated as X), or
  // "attr:M" (`getattr(M, name)` with a name known only at run time). The key
  // "name[]" says what each item of name holds (`dirs = [Path(a), Path(b)]`).
  std::map<std::string, std::string> types;
  // A local (module variable) bound to a list, tuple or set of string literals, or a
  // `for` name over one: its strings (`getattr(os, name)` is then os.a, os.b).
  std::map<std::string, std::vector<std::string>> strings;
  std::string returns;              // its return annotation as a dotted name (Optional[X] -> X), or ""
  bool returns_inferred = false;    // no annotation: every `return` makes `returns` (`return X(...)`)
  bool is_property = false;         // @property / @cached_property: reading the attribute runs it
  // @abstractmethod, a body (past its docstring) of only `raise NotImplementedError`,
  // or of only `...` in an ABC or a Protocol: what runs is a subclass's override.
  bool abstract = false;
  std::vector<Ref> refs;
  std::vector<std::string> params;  // in order (the first of a method is self)
  // Parameters whose default is True, False or None: name -> 'T', 'F', 'N'.
  std::map<std::string, char> defaults;
  bool overload = false;            // @overload: a signature for type checkers, never what runs
  bool is_local(const std::string& name) const;
};

struct Class {
  std::string qualified;
  int line = 0;
  std::vector<std::string> bases;    // dotted as written
  std::map<std::string, int> methods;  // name -> function index
  // What x holds, as Function::types, with the function whose code says it:
  // `self.x = X(...)` or `self.x = param` (param annotated) in a method, `x: X` in the
  // class body. Every different one, in source order (at most kMaxAttrTypes): an
  // attribute the code gives two classes may hold either.
  std::map<std::string, std::vector<std::pair<int, std::string>>> attr_types;
  static constexpr size_t kMaxAttrTypes = 4;
  int scope = 0;                     // function whose code defines it (0: the top level)
};

struct ModuleFacts {
  std::string name;     // dotted
  bool is_package = false;
  std::string file;     // where it came from, for messages (relative path)
  std::string root;     // the folder `file` is relative to (a site folder), "" when not known
  std::vector<Function> functions;          // [0]: the top level
  std::vector<Class> classes;
  std::map<std::string, int> class_names;   // top-level classes by name
  std::map<std::string, std::string> aliases;  // top level `g = f`, `g = functools.cache(f)`
  std::vector<std::string> stars;           // `from m import *`, absolute
  // What `from this import *` binds: `__all__`'s names when the module writes it as a
  // list or tuple of strings (and `+=` more); else (no __all__) its public names.
  std::vector<std::string> all;
  enum class Exports { public_names, listed, unknown } exports = Exports::public_names;
  int syntax_errors = 0;                    // ERROR nodes (the rest is still read)
  bool typed = false;                       // extracted with what values hold (extract's `types`)
  // The compiled twin `import` loads in place of `file` ("" when the source is what runs):
  // such a module is not read, and a name reached through it is said to be compiled.
  std::string compiled;
};

/// Parses `source` once (tree-sitter) and reads its facts; the tree is gone on return.
/// `module` and `is_package` resolve relative imports. Without `types`, what values
/// hold (Function::types, returns, is_property, Class::attr_types) is left out: a scan
/// resolves names through imports only and need not pay for it.
ModuleFacts extract(std::string_view source, const std::string& module, bool is_package, bool types = true);

/// The absolute module a relative import names: `level` leading dots, then `rest`.
/// "" when it climbs above the top-level package.
std::string absolute_module(const std::string& module, bool is_package, int level, const std::string& rest);

}  // namespace sitepatch::audit
