// explain --run's candidates that are not a decorator on a frame: register-custom-op on a
// kernel wrapper (its fake guessed, or written from what a run saw the real function do),
// the fake learnt from a run that failed on it, and the config knobs dynamo's own hints
// name for a break.
#include <algorithm>
#include <regex>

#include "engine/explain/explain_impl.hpp"
#include "engine/proofs/run_impl.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {

namespace {

// A fake's body: `outputs` tensors, the i-th shaped as the i-th input (the last one
// for the rest).
std::string fake_body(const std::vector<std::string>& inputs, int outputs) {
  std::string fake = "return ";
  for (int i = 0; i < outputs; ++i)
    fake += (i ? ", " : "") + std::string("torch.empty_like(") + inputs[std::min(size_t(i), inputs.size() - 1)] + ")";
  return fake + "\n";
}

}  // namespace

std::optional<Candidate> CandidateFinder::custom_op(const PlacedFrame& f, const python::FunctionFacts& facts,
                                                    FrameNote& note) {
  // A kernel wrapper: a module-level function of tensors whose result is no constant.
  if (facts.method || f.qualified.find('.') != std::string::npos) {
    note.custom_op_why = "not a module-level function";
    return std::nullopt;
  }
  if (facts.result.kind != python::ResultFacts::unknown && facts.result.kind != python::ResultFacts::tensor) {
    note.custom_op_why = facts.result.why + ": no tensor";
    return std::nullopt;
  }
  std::vector<std::string> tensors;  // the parameters without a default: what a wrapper takes tensors as
  for (auto& p : facts.params) {
    if (p[0] == '*') {
      note.custom_op_why = "it takes *args or **kwargs, which a custom op's schema cannot";
      return std::nullopt;
    }
    if (facts.default_constant.count(p)) continue;
    auto a = facts.annotations.find(p);
    if (a != facts.annotations.end() && a->second.find("Tensor") == std::string::npos) {
      // A str, a dtype: in the schema as what it is, which only the recipe's op-schema
      // can say; read as a tensor, the fake would lie about it.
      note.custom_op_why = "parameter `" + p + "` is annotated " + util::printable(a->second) +
                           ", no tensor: its schema type is not one this can write (give op-schema by hand)";
      return std::nullopt;
    }
    if (!non_tensor_args_.count(p)) tensors.push_back(p);
    else {
      note.custom_op_why = "parameter `" + p + "` is given `" + util::printable(non_tensor_args_.at(p)) +
                           "`, no tensor: its schema type is not one this can write (give op-schema by hand)";
      return std::nullopt;
    }
  }
  if (tensors.empty()) {
    note.custom_op_why = "it takes no tensor to give its outputs a shape from";
    return std::nullopt;
  }
  std::string fake = fake_body(tensors, std::max(1, facts.returns_tuple));
  std::string seen_how = "as the fake guesses (each output shaped as an input)";
  if (auto o = observed_.find(f.name()); o != observed_.end()) {
    // What the real function returned in a run: the fake says the same.
    std::string why;
    fake = observed_fake(o->second, tensors, why);
    if (fake.empty()) {
      note.custom_op_why = why;
      return std::nullopt;
    }
    seen_how = "as the real function returned them on the repro's inputs" + (why.empty() ? "" : " (" + why + ")");
  }
  Candidate c;
  c.inputs = tensors;
  c.kind = Candidate::custom_op;
  c.fix.module = f.module;
  c.fix.function = f.qualified;
  c.fix.action = "register-custom-op";
  c.fix.code = fake + "\n";
  fake = fake.substr(0, fake.size() - 1);
  c.fix.ensure_import = "import torch";
  c.fix.dist = f.dist;
  c.fix.version = f.version;
  c.shared = !f.site_dir.empty() && !shared_owner(s_.env, f.site_dir).empty();
  c.fix.why = "torch.library.custom_op makes " + f.qualified + " one node to dynamo: its body runs eagerly, its "
              "fake (" + fake.substr(7) + ") gives dynamo the outputs' shape, dtype and device, " + seen_how;
  c.fix.cost = f.qualified + " becomes an operator: no autograd through it (training needs register_autograd), "
               "its outputs must be new tensors shaped as the fake says, and it must not change its inputs";
  note.custom_op = true;
  note.custom_op_why = "a module-level function of tensors (" + util::join(tensors, ", ") +
                       ") whose result is no constant; fake: " + fake.substr(7);
  return c;
}

std::vector<Candidate> config_knobs(const ExplainedBreak& b) {
  // "Set `torch._dynamo.config.capture_scalar_outputs = True` or ...", "Add the logging
  // method to `torch._dynamo.config.ignore_logging_functions`", "... adding it to
  // `torch._dynamo.config.reorderable_logging_functions`".
  static const std::regex assign(R"(`torch\._dynamo\.config\.(\w+) = (True|False|\d+)`)");
  static const std::regex add_to(R"(`torch\._dynamo\.config\.(ignore_logging_functions|reorderable_logging_functions)`)");
  static const std::regex callable(R"(^[A-Za-z_][\w.]*$)");
  std::vector<Candidate> out;
  auto knob = [&](std::string code, std::string why) {
    Candidate c;
    c.kind = Candidate::config;
    c.fix.action = "config";
    c.fix.code = std::move(code);
    c.fix.why = std::move(why);
    c.fix.cost = "global to the process: every compiled function sees it";
    out.push_back(std::move(c));
  };
  const auto& brk = b.logged.brk;
  for (const std::string& h : explain::useful_hints(brk)) {
    std::smatch m;
    if (std::regex_search(h, m, assign)) {
      knob("torch._dynamo.config." + m[1].str() + " = " + m[2].str(), "dynamo's hint: " + util::printable(h));
    } else if (std::regex_search(h, m, add_to) && std::regex_match(brk.operation, callable)) {
      // The operation as Python names it: a builtin (`print`) or module.attr (`logging.Logger.warning`).
      std::string op = brk.operation;
      std::string module = op.find('.') == std::string::npos ? "" : op.substr(0, op.find('.'));
      knob((module.empty() ? "" : "import " + module + "; ") + "torch._dynamo.config." + m[1].str() + ".add(" + op + ")",
           "dynamo's hint: " + util::printable(h));
    }
  }
  return out;
}

std::optional<Candidate> refine_custom_op(const Candidate& tried, const std::string& failure) {
  // torch says what the function really returned when it does not fit the schema:
  // "Unable to cast (tensor([...]), tensor([...])) to Tensor".
  const std::string mark = "Unable to cast (";
  size_t at = failure.find(mark);
  if (tried.kind != Candidate::custom_op || tried.inputs.empty() || at == std::string::npos) return std::nullopt;
  int outputs = 0;
  for (size_t p = failure.find("tensor(", at); p != std::string::npos; p = failure.find("tensor(", p + 1)) ++outputs;
  if (outputs < 2 || tried.fix.code.find("), torch.empty_like(") != std::string::npos) return std::nullopt;
  Candidate c = tried;
  c.fix.code = fake_body(c.inputs, outputs);
  c.fix.why = "torch.library.custom_op makes " + c.fix.function + " one node to dynamo; it returns " +
              std::to_string(outputs) + " tensors (as its run said), each shaped by its fake as an input";
  return c;
}

}  // namespace sitepatch::engine
