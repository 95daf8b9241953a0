#pragma once
// The solver's state (flow/solver.cpp: values, variables, the worklist, modules and
// scopes; solver_ops.cpp: each instruction; solver_calls.cpp: calls and the builtins it
// models; solver_lookup.cpp: attributes, the MRO, containers).
#include <deque>
#include <set>
#include <tuple>
#include <unordered_set>
#include <utility>

#include "audit/flow/solver.hpp"

namespace sitepatch::audit::flow {

struct ValueHash {
  size_t operator()(const Value& v) const {
    return (size_t(v.kind) * 0x9E3779B97F4A7C15ull) ^ (size_t(v.a) << 20) ^ size_t(v.b) * 31;
  }
};

/// What Linux and this analysis's defaults say of a few names the standard library binds
/// (sys.platform, os.name, typing.TYPE_CHECKING), as a constant's name; nullptr for others.
const char* known_constant(const std::string& dotted);
std::string dotted(const std::string& base, const std::string& name);
/// Whether a container's method by this name moves items in or out (append, get, items...):
/// the ones Impl::container_method models, whose receiver matters.
bool moves_items(const std::string& name);


constexpr uint32_t kNoInstr = UINT32_MAX;  // an analysis step no instruction asked for
constexpr uint16_t kMaxExternals = 64;     // names outside the program one variable keeps apart
constexpr size_t kMaxHeld = 6'000'000;     // values held by all variables together, at most
constexpr size_t kMaxValues = 400'000;     // distinct values, at most

struct Solver::Impl {
  explicit Impl(Source& s) : source(s) {}

  Source& source;

  // Strings and values, interned.
  // Deques: references to a value or a string stay good while more are interned.
  std::deque<std::string> strings;
  std::unordered_map<std::string, uint32_t> string_ids;
  uint32_t str(const std::string& s);
  std::deque<Value> values;
  std::unordered_map<Value, uint32_t, ValueHash> value_ids;
  uint32_t value(Kind k, uint32_t a = 0, uint32_t b = 0);

  // Modules, with their scopes, classes, calls and containers numbered globally.
  struct Loaded {
    Module ir;
    uint32_t var_base = 0, scope_base = 0, class_base = 0, call_base = 0, container_base = 0, guard_base = 0;
    bool top_reached = false;
    bool program = false;  // its import-time calls are followed (the entry's module, or a script's siblings)
  };
  std::string entry_module;  // set before the first load
  std::vector<uint32_t> made_before;  // classes whose instance a method entry receives
  std::deque<Loaded> modules;  // a deque: references to a module's code outlive loading more
  std::map<std::string, int> module_index;  // -1: no source
  struct ScopeRef { uint32_t module; uint32_t local; };
  // ctx: 0, or the clone (solver_clones.cpp) whose variables stand for the scope's own.
  struct ScopeAt { uint32_t module; uint32_t local; uint32_t ctx = 0; };
  std::vector<ScopeAt> scopes;   // global scope id -> module, index
  std::vector<ScopeRef> classes;  // global class id -> module, index
  std::vector<ScopeRef> calls, containers;
  int load(const std::string& name);  // module index, -1 when none
  // Modules whose compiled twin import loads (no source is read), by name.
  std::set<std::string> compiled_modules;
  // A module a star import reads that has no source: compiled (or a C extension of the
  // package's own that this environment lacks), unless it is outside every package read.
  bool compiled_star(const std::string& module) {
    if (compiled_modules.count(module)) return true;
    size_t dot = module.find('.');
    return dot != std::string::npos && load(module) < 0 && load(module.substr(0, dot)) >= 0;
  }
  // Names a star import of a compiled module may have bound: an external value, marked.
  std::unordered_set<uint32_t> star_made;  // string ids of their dotted names
  // Names a program instance's attribute was taken to be because its class has a base from
  // outside and defines no such name itself (`threading.Thread._work`).
  std::unordered_set<uint32_t> inherited_guesses;
  // Variables a class's __getattr__ answered an attribute into: why what they hold is not known.
  std::unordered_map<uint32_t, std::string> getattr_made;
  // Calls of getattr(module, any_name) that found no function or class of it: (instr, value) -> text.
  std::map<std::pair<uint32_t, uint32_t>, std::string> uncalled_any;
  std::map<std::pair<uint32_t, uint32_t>, std::string> called_any;  // those that found some
  // Variables an abstract method no subclass overrides was looked up into: why the call is
  // not followed.
  std::unordered_map<uint32_t, std::string> abstract_unfollowed;
  // Abstract calls no subclass some reached code makes overrides: looked for across the
  // class's package once the fixpoint is reached (far_subclasses).
  struct Unmade {
    uint32_t cls, found, dst, instr;
    std::string name;
    int line;
  };
  std::vector<Unmade> unmade;
  std::set<std::tuple<uint32_t, std::string, uint32_t>> unmade_seen;
  std::unordered_set<uint32_t> far_made;  // subclasses dispatched to though nothing makes them
  std::set<std::string> far_asked;
  std::unordered_set<uint32_t> far_sent;  // calls sent to subclasses found across the package
  size_t far_read_count = 0;
  std::vector<size_t> unmade_pending() const;
  uint32_t entry_scope = UINT32_MAX;  // the function entry's scope id, if any
  bool far_read();  // reads the modules that may subclass them: whether any was read
  bool far_send();  // sends each call to the overrides now read: whether any was sent
  uint32_t star_made_value(const std::string& module, const std::string& name) {
    uint32_t id = str(module + "." + name);
    star_made.insert(id);
    return value(Kind::external, id);
  }
  const Module& mod(uint32_t m) const { return modules[m].ir; }
  const Scope& scope(uint32_t s) const { return modules[scopes[s].module].ir.scopes[scopes[s].local]; }

  // Variables.
  struct VarState {
    std::vector<uint32_t> pts;  // sorted value ids
    std::vector<uint32_t> succ;  // copy edges
    std::vector<uint32_t> watchers;  // instructions (ids) evaluated again when it grows
    std::vector<uint32_t> pending;   // values added since the last flush
    bool dirty = false;
    uint16_t externals = 0;          // names outside the program offered to it
  };
  // Variables' states, made when a variable is first written or watched: most variables of
  // the modules torch's import reads never are. A vector of 391 thousand states, grown by
  // doubling, was 49 of the 153 MB get_cpp_compiler's walk peaked at.
  class VarTable {
   public:
    VarState& operator[](uint32_t var) {
      uint32_t& at = index_[var];
      if (at == kNone) {
        at = uint32_t(states_.size());
        states_.emplace_back();  // a deque: references to the others stay good
      }
      return states_[at];
    }
    const VarState& operator[](uint32_t var) const {
      uint32_t at = index_[var];
      return at == kNone ? empty_ : states_[at];
    }
    size_t size() const { return index_.size(); }
    void resize(size_t n) { index_.resize(n, kNone); }
    void emplace_back() { index_.push_back(kNone); }
    size_t made() const { return states_.size(); }

   private:
    static constexpr uint32_t kNone = UINT32_MAX;
    std::vector<uint32_t> index_;
    std::deque<VarState> states_;
    VarState empty_;
  };
  VarTable vars;
  uint32_t new_var();
  // A variable of its own for one instruction and purpose (`what`, `of` a value): the same
  // one each time the instruction is evaluated again.
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> temps;
  uint32_t temp(uint32_t instr, uint32_t what, uint32_t of = 0);
  bool add(uint32_t var, uint32_t value);
  void add_all(uint32_t var, const std::vector<uint32_t>& vals);
  std::vector<uint32_t> dirty;  // variables with pending values
  void flush();
  void copy_edge(uint32_t from, uint32_t to);
  std::unordered_set<uint64_t> copy_edges;
  const std::vector<uint32_t>& pts(uint32_t var) const { return std::as_const(vars)[var].pts; }
  uint32_t gvar(uint32_t module, Var v) const { return modules[module].var_base + v; }
  // Variable v of scope `scope`'s code: its clone's copy where the scope is a clone and v
  // one of the variables only its tree uses, else the module's.
  uint32_t svar(uint32_t scope, Var v) const;
  uint32_t ivar(uint32_t instr, Var v) const { return svar(instrs[instr].scope, v); }

  // Clones (solver_clones.cpp): a small function that defines nested functions, with them,
  // per call site, so each call's arguments, and the closures it makes, are its own.
  struct CloneTree {
    bool eligible = false;
    std::vector<uint32_t> locals;  // the root first, then its nested scopes
    std::vector<Var> privates;     // sorted: the variables no scope outside the tree uses
    std::unordered_map<uint32_t, uint32_t> by_site;  // call instruction -> the clone's root scope id
  };
  struct CloneCtx {
    uint32_t base = 0;  // its first variable
    const CloneTree* tree = nullptr;
    std::vector<uint32_t> ids;  // global scope ids of tree->locals' copies, in order
  };
  std::unordered_map<uint64_t, CloneTree> clone_trees;  // (module, root local)
  std::vector<CloneCtx> clone_ctxs{CloneCtx{}};         // [0]: none
  std::vector<std::vector<std::vector<uint32_t>>> scope_children;   // module -> scope -> nested scopes
  size_t clones_made = 0;
  uint32_t clone_for(uint32_t scope, uint32_t instr);
  CloneTree& clone_tree(uint32_t module, uint32_t local);
  // The scope a function value made by `index` of `scope`'s module is: its clone's copy
  // inside a clone.
  uint32_t nested_scope(uint32_t scope, uint32_t index) const;
  // The scope as lowered (a clone's original): what edges and reports name.
  uint32_t origin(uint32_t scope) const { return modules[scopes[scope].module].scope_base + scopes[scope].local; }

  // Instructions: id = (module, scope, index) packed into a table when first reached.
  struct Site { uint32_t module, scope_local, index, scope; };
  std::vector<Site> instrs;
  std::vector<uint8_t> active, queued;
  std::unordered_set<uint64_t> watching;
  std::deque<uint32_t> work;
  std::unordered_set<uint64_t> handled;  // (call instruction, callee value) bound for good
  uint64_t evaluations = 0;
  size_t held = 0;   // values held by all variables
  bool cut = false;  // the fixpoint was stopped at a limit
  void watch(uint32_t var, uint32_t instr);
  void enqueue(uint32_t instr);

  // Reached scopes and what they did.
  std::vector<uint8_t> reached;
  void reach(uint32_t scope);
  void reach_top(uint32_t module);
  bool guard_may_pass(uint32_t scope, uint32_t guard, uint32_t instr, bool empty_passes = false);
  bool chain_may_pass(uint32_t scope, uint32_t guard, std::vector<const Guard*>& below, uint32_t instr,
                      bool empty_passes);
  void evaluate(uint32_t instr);
  // The instructions whose effect takes more than a few lines (solver_ops.cpp).
  void eval_import_from(uint32_t id);
  void eval_load_item(uint32_t id);
  void eval_store_item(uint32_t id);
  void annotated_collection(uint32_t id, uint32_t generic, const std::string& name, uint32_t args, uint32_t dst);
  void eval_make_list(uint32_t id);
  void eval_call(uint32_t id);
  void eval_unpack(uint32_t id);
  void eval_enter(uint32_t id);
  void eval_binary(uint32_t id);
  // The literal keys an item access may use: its own literal, else every constant the key's
  // variable holds (empty: some key is not known).
  std::vector<std::string> literal_keys(const std::string& literal, Var key, uint32_t instr);
  std::vector<uint32_t> read_var(uint32_t var, uint32_t instr) { return vals(var, instr); }
  // What a variable holds, `from m import n` values read (m loaded then, its top level
  // reached): the one way instructions read their variables; each variable consulted is
  // watched by `instr` (and listed in `consulted`).
  std::vector<uint32_t> vals(uint32_t var, uint32_t instr, std::vector<uint32_t>* consulted = nullptr);
  std::unordered_map<uint32_t, uint32_t> lazy_vars;  // lazy value -> the variable it reads
  uint32_t force(uint32_t lazy, uint32_t instr);

  std::vector<FlowEdge> edges;
  std::unordered_set<uint64_t> edge_seen;
  std::vector<ExternalCall> externals;
  std::set<std::tuple<uint32_t, int, int, std::string>> external_seen;
  std::vector<Unfollowed> unfollowed;
  std::set<std::tuple<uint32_t, int, std::string>> unfollowed_seen;
  void edge(uint32_t from, uint32_t to, int line);
  void external(uint32_t scope, const Instr& in, const std::string& name, const std::string& text);
  void not_followed(uint32_t scope, const Instr& in, const std::string& text, const std::string& why);
  void note_empty_calls();
  std::optional<std::string> import_circle(uint32_t var) const;
  void compare(uint32_t id);
  bool test_may_pass(const Guard& gd, const std::vector<uint32_t>& held, bool empty_passes) const;
  void note_ruled_out();
  std::optional<std::string> ruled_by_arguments(const Site& site, uint32_t guard) const;
  std::vector<uint32_t> callee_values(uint32_t scope, Var var, int depth = 0);
  std::vector<RuledOutCall> ruled_out_calls;
  // The values a module's globals hold (what getattr(module, any_name) may give).
  std::vector<uint32_t> module_values(uint32_t name, uint32_t instr);
  uint32_t any_attribute(uint32_t module_value);
  void load_any_attr(uint32_t module, const std::string& name, uint32_t dst, uint32_t instr);
  std::string why_unknown(uint32_t scope, Var var, bool empty) const;
  // Why the callee of call instruction `instr`, as written `text`, holds an unknown value.
  std::string unknown_callee(uint32_t instr, const std::string& text) const {
    const Instr& in = instr_of(instr);
    const Site& site = instrs[instr];
    if (in.op != Op::call || modules[site.module].ir.calls[size_t(in.index)].text != text)
      return "a value this analysis does not know";
    auto made = getattr_made.find(ivar(instr, modules[site.module].ir.calls[size_t(in.index)].callee));
    if (made != getattr_made.end()) return made->second;
    return why_unknown(site.scope, modules[site.module].ir.calls[size_t(in.index)].callee, false);
  }

  // Attributes, classes, containers (solver_lookup.cpp).
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> instance_attrs, class_attrs, module_attrs;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> container_slots;  // (container, key) -> var
  std::unordered_map<uint32_t, std::vector<std::pair<uint32_t, uint32_t>>> slots_of;  // container -> (key, var)
  bool has_slot(uint32_t container, const std::string& key) const {
    auto it = string_ids.find(key);
    return it != string_ids.end() && container_slots.count({container, it->second});
  }
  std::map<uint32_t, uint32_t> container_any, container_all;
  std::map<uint32_t, uint32_t> synthetic_items;  // dict container -> its items() tuples container
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> param_containers;  // (scope, parameter) -> container
  uint32_t synthetic_containers = 0;
  uint32_t module_attr(uint32_t module_value, const std::string& name, uint32_t instr);
  uint32_t class_attr_var(uint32_t cls, const std::string& name);
  uint32_t instance_attr(uint32_t cls, const std::string& name);
  std::vector<uint32_t> mro(uint32_t cls, uint32_t instr);
  // MROs computed since the last time a class's bases grew (a base variable's values).
  struct MroCache { uint64_t epoch; std::vector<uint32_t> order, base_vars; };
  std::unordered_map<uint32_t, MroCache> mro_cache;
  std::unordered_set<uint32_t> base_vars;  // variables some class statement reads a base from
  uint64_t bases_epoch = 0;
  std::vector<uint32_t> compute_mro(uint32_t cls, std::vector<uint32_t>& consulted, int depth, uint32_t instr);
  std::optional<std::pair<uint32_t, uint32_t>> find_in_mro(uint32_t cls, const std::string& name, uint32_t instr,
                                                           uint32_t after = UINT32_MAX);
  std::vector<std::string> external_bases(uint32_t cls, uint32_t instr);
  void load_attr(uint32_t value, const std::string& name, uint32_t dst, uint32_t instr);
  void load_instance_attr(uint32_t value, const std::string& name, uint32_t dst, uint32_t instr, int line);
  void load_module_attr(uint32_t module_value, const std::string& name, uint32_t dst, uint32_t instr, int line);
  void bind_into(uint32_t attr_var, uint32_t receiver, bool via_instance, uint32_t dst, uint32_t instr, int line);
  void dispatch_abstract(uint32_t cls, const std::string& name, uint32_t found, uint32_t dst, uint32_t instr, int line);
  std::unordered_set<uint32_t> constructed;  // classes some reached code makes an instance of
  std::vector<std::pair<uint32_t, uint32_t>> methods_calling;  // call_method's (receiver, name) under way
  uint32_t slot(uint32_t container, const std::string& key);
  uint32_t any_slot(uint32_t container);
  uint32_t all_items(uint32_t container);
  uint32_t make_container(Container::Kind kind);
  void items_of(uint32_t value, uint32_t dst, uint32_t instr, int line);
  void slice_of(uint32_t value, const std::string& from, uint32_t dst, uint32_t instr);
  std::vector<Container::Kind> container_kinds;  // by container id

  // Calls (solver_calls.cpp).
  struct CallArgs {
    std::vector<uint32_t> positional;  // vars
    std::vector<std::pair<std::string, uint32_t>> keywords;
    std::vector<uint32_t> star, star_star;
  };
  void call_any(uint32_t callee, const CallArgs& args, uint32_t dst, uint32_t instr, int line, const std::string& text);
  void call_value(uint32_t callee, const CallArgs& args, uint32_t dst, uint32_t instr, int line,
                  const std::string& text, std::optional<uint32_t> receiver = std::nullopt);
  void call_scope(uint32_t scope, const CallArgs& args, uint32_t dst, uint32_t instr, int line,
                  std::optional<uint32_t> receiver);
  void construct(uint32_t cls, const CallArgs& args, uint32_t dst, uint32_t instr, int line,
                 bool via_metaclass = true);
  // A class statement's implicit calls: the metaclass's __new__/__init__, the nearest
  // base's __init_subclass__, each attribute's __set_name__.
  void class_made(uint32_t cls, uint32_t instr, int line);
  bool call_builtin(const std::string& name, const CallArgs& args, uint32_t dst, uint32_t instr, int line);
  // torch.compile and dynamo's markers give back what they wrap (solver_dynamo.cpp): as a
  // function of the program (its scope) or a name from outside.
  static bool dynamo_wrapper_name(const std::string& dotted);
  bool call_dynamo_wrapper(uint32_t scope, const CallArgs& args, uint32_t dst, uint32_t instr, int line);
  bool call_dynamo_name(const std::string& name, const CallArgs& args, uint32_t dst, uint32_t instr, int line);
  void call_method(uint32_t receiver, const std::string& name, const CallArgs& args, uint32_t dst, uint32_t instr,
                   int line);
  bool container_method(uint32_t cm, const CallArgs& args, uint32_t dst, uint32_t instr, int line);
  uint32_t caller_scope(uint32_t instr) const { return instrs[instr].scope; }

  // Parameters given back as they were given (solver_passthrough.cpp): each call's
  // argument is its own result, not every call's.
  struct ReturnSources {
    std::vector<uint32_t> params;  // parameter indices the return copies
    std::vector<Var> leaves;       // the scope's other variables it copies
  };
  struct PassSite {
    uint32_t from, dst;
    bool is_value;  // from: a value (a bound receiver), else a variable
  };
  std::unordered_map<uint64_t, ReturnSources> return_source_cache;  // (scope, instruction index)
  std::unordered_set<uint64_t> params_returned;                     // (scope, parameter)
  std::unordered_map<uint64_t, std::vector<PassSite>> pass_sites;   // (scope, parameter) -> calls
  std::set<std::tuple<uint64_t, uint32_t, uint32_t, bool>> pass_seen;
  const ReturnSources& return_sources(uint32_t scope, uint32_t index);
  void eval_return(uint32_t id);
  void returned_param(uint32_t scope, uint32_t param);
  void pass_on(const PassSite& site);
  void bind_param(uint32_t scope, uint32_t param, uint32_t param_var, uint32_t from, bool is_value, uint32_t dst);
  const Instr& instr_of(uint32_t instr) const;

  // A measurement aid (solver_dump.cpp): the largest variables, on SITEPATCH_FLOW_DUMP.
  std::string describe_var(uint32_t var) const;
  void dump_growth() const;
  void dump_totals() const;
  void dump_largest(size_t top) const;
  std::string describe_value(uint32_t value) const;
  void dump_path(const std::string& to) const;
};

}  // namespace sitepatch::audit::flow
