// torch's own compile entry points and dynamo's markers (torch.compile, torch.compiler's
// disable, assume_constant_result, allow_in_graph, substitute_in_graph, set_stance,
// torch._dynamo's decorators, torch._disable_dynamo): each gives back the function it is
// handed, or a wrapper that calls it, or, called with options only, a decorator that does.
// Their bodies are dynamo's machinery: following them read 184 more of torch 2.13's
// modules for one @torch.compiler.assume_constant_result (2.4 s), and a walk through
// @torch.compiler.disable there ran for over ten minutes. The value that comes out is the
// one that goes in, as the walk found when it finished; the same whether torch is
// installed (a function of the program) or not (a name from outside).
#include "audit/flow/solver_impl.hpp"

namespace sitepatch::audit::flow {

namespace {

bool marker_module(const std::string& module) {
  return module == "torch.compiler" || module == "torch._dynamo.decorators" || module == "torch._compile";
}

}  // namespace

bool Solver::Impl::dynamo_wrapper_name(const std::string& dotted) {
  if (dotted == "torch.compile" || dotted == "torch._disable_dynamo") return true;
  // torch 2.0 and 2.1 defined disable and optimize beside the frame evaluation.
  if (dotted == "torch._dynamo.eval_frame.disable" || dotted == "torch._dynamo.eval_frame.optimize") return true;
  size_t dot = dotted.rfind('.');
  if (dot == std::string::npos) return false;
  std::string module = dotted.substr(0, dot);
  // torch._dynamo.disable as the package re-exports it: a name from outside says no more.
  return marker_module(module) || module == "torch._dynamo";
}

bool Solver::Impl::call_dynamo_wrapper(uint32_t scope, const CallArgs& args, uint32_t dst, uint32_t instr, int line) {
  const uint32_t m = scopes[scope].module, local = scopes[scope].local;
  const Scope& s = modules[m].ir.scopes[local];
  // A function of no parameters (is_compiling, reset) wraps nothing: its body is followed.
  if (s.kind != Scope::function || s.parent != 0 || s.params.empty()) return false;
  const std::string& module = modules[m].ir.name;
  if (!(marker_module(module) || dynamo_wrapper_name(module + "." + s.qualified))) return false;
  return call_builtin("<identity>", args, dst, instr, line);
}

bool Solver::Impl::call_dynamo_name(const std::string& name, const CallArgs& args, uint32_t dst, uint32_t instr,
                                    int line) {
  // No argument at all (torch._dynamo.reset(), torch.compiler.is_compiling()): no wrapper.
  bool given = !args.positional.empty() || !args.keywords.empty() || !args.star.empty() || !args.star_star.empty();
  if (!given || !dynamo_wrapper_name(name)) return false;
  return call_builtin("<identity>", args, dst, instr, line);
}

}  // namespace sitepatch::audit::flow
