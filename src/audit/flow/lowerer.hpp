#pragma once
// The pass that lowers one module's tree into flow::Module: names and scopes
// (lower.cpp), statements (lower_stmt.cpp), expressions (lower_expr.cpp). Recursion is
// bounded (kMaxDepth): deeper expressions become Op::unknown, so no thread's stack runs out.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "audit/flow/ir.hpp"
#include "python/tree.hpp"

namespace sitepatch::audit::flow::detail {

/// What the code binds a name to at one point of a scope: its current variable.
using Bindings = std::map<std::string, Var>;

struct ScopeState {
  int scope = 0;                     // index into Module::scopes
  int cls = -1;                      // a class body being lowered (its names are class attributes)
  std::set<std::string> locals;      // names the scope binds anywhere (parameters included)
  std::set<std::string> globals;     // `global` names
  std::set<std::string> nonlocals;   // `nonlocal` names
  std::map<std::string, Var> summary;  // every value a local is ever given
  Bindings now;                      // flow-sensitive: each local's current variable
  int lambdas = 0;                   // lambdas numbered so far in this scope
  bool dead = false;                 // after return/raise/break/continue: the rest never runs
};

class Lowerer {
 public:
  Lowerer(std::string_view src, Module& m) : src_(src), m_(m) {}
  void run(TSNode root);

 private:
  static constexpr int kMaxDepth = 200;

  // lower.cpp: variables, scopes, names
  Var fresh();
  Var emit(Instr in);
  Instr at(Op op, TSNode n) const;
  ScopeState& cur() { return states_.back(); }
  void collect_locals(TSNode body, ScopeState& st, bool is_class) const;
  Var read(const std::string& name, TSNode where);
  void bind(const std::string& name, Var value);
  Var summary_of(ScopeState& st, const std::string& name);
  Var constant(const std::string& what, TSNode n);
  std::string text(TSNode n) const { return std::string(python::ts::text(src_, n)); }
  std::string qualified_child(const std::string& name) const;

  // lower_stmt.cpp: statements
  void block(TSNode n);
  void statement(TSNode n);
  void function_def(TSNode n, TSNode decorated);
  void class_def(TSNode n, TSNode decorated);
  void decorate(TSNode decorated, Var& value);
  void assign(TSNode target, Var value);
  void exports(TSNode value, bool more);
  Var generic_type(TSNode n);
  std::optional<TSNode> optional_collection(TSNode n) const;
  void if_statement(TSNode n);
  bool on_parameters(uint32_t guard, uint32_t outer) const;
  void loop(TSNode n, bool is_for);
  void try_statement(TSNode n);
  void with_statement(TSNode n);
  void import_statement(TSNode n);
  void import_from(TSNode n);
  void match_statement(TSNode n);
  Bindings join(const std::vector<Bindings>& arms, const Bindings& before);
  void params(TSNode params, Scope& s, ScopeState& st);

  // lower_expr.cpp: expressions
  Var expr(TSNode n);
  Var call(TSNode n);
  Var attribute(TSNode n);
  Var subscript(TSNode n);
  Var container(TSNode n, Container::Kind kind);
  Var comprehension(TSNode n, Container::Kind kind);
  Var lambda(TSNode n);
  Var binary(TSNode n, const std::string& dunder);
  Var conditional(TSNode n);
  Var string(TSNode n);
  std::pair<uint32_t, uint32_t> condition(TSNode n);
  uint32_t guard(Var var, Guard::Test test, const std::string& literal = {});
  uint32_t either(uint32_t a, uint32_t b);
  std::string literal_of(TSNode n) const;
  Var annotation(TSNode n);
  void field_factory(Var made);
  Var assignment(TSNode n);

  std::string_view src_;
  Module& m_;
  std::vector<ScopeState> states_;
  uint32_t guard_ = 0;  // the guard every instruction emitted now carries
  int depth_ = 0;
  std::map<std::string, int> class_names_;  // classes of this module by qualified name
  // Names some function rebinds with `global`: the top level reads their summary, since a
  // call may have changed them since its own last assignment.
  std::set<std::string> rebound_;
};

}  // namespace sitepatch::audit::flow::detail
