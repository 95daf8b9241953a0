#pragma once
// What the source says about a call's arguments and a function's result, for
// explain --run's assume_constant_result: dynamo calls such a function once while
// tracing and keeps what it returned, which is right only when every call passes values
// fixed at compile time and the result is one dynamo can hold as a constant. Pure: a
// text in, facts out.
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sitepatch::python {

/// One argument of a call, as far as the source shows it.
struct ArgumentFacts {
  std::string slot;  // "#0", "#1" (positional) or the keyword's name
  enum Kind {
    constant,   // a literal, a tuple/list/dict of them, a module-level constant, torch.<dtype>
    parameter,  // a parameter of the calling function: constant when its own callers pass one
    guarded,    // what dynamo guards and holds as a constant: a tensor's device, device.type, dtype,
                // is_cuda, ndim, dim(); its shape/size(i) (static shapes); a local assigned one
    other,      // anything else (a tensor, an attribute, a call's result)
  } kind = other;
  std::string text;  // as written ("name", "x.shape[0]")
  std::vector<std::string> guards;  // guarded: the kinds of metadata it rests on ("device.type", "shape[i]")
};

/// A call whose callee's last name is the one asked for.
struct CallFacts {
  int line = 0;
  std::string callee;  // as written ("env.load_scales")
  std::vector<ArgumentFacts> args;
  bool spread = false;  // *args or **kwargs: what it passes is not known
};

/// What a function returns, judged by its annotation or its return statements.
struct ResultFacts {
  enum Kind {
    holdable,  // None, bool, int, float, str, torch.dtype/device, containers of these
    object,    // an instance (a class called), a module: no constant dynamo can hold
    tensor,    // annotated as tensors: Tensor, Tuple[Tensor, Tensor], Optional[Tensor], list[Tensor]
    unknown,
  } kind = unknown;
  std::string why;  // "returns a Version object", "returns json.load(...)", "annotated -> str"
};

/// A function's facts: parameters, which defaults are constants, what it returns.
struct FunctionFacts {
  bool found = false;
  bool method = false;  // defined in a class: its first parameter is the instance
  std::vector<std::string> params;  // in order, `self` included; *args/**kwargs as "*a"/"**k"
  std::map<std::string, bool> default_constant;  // each parameter with a default: is it a constant
  std::map<std::string, std::string> annotations;  // each annotated parameter: its annotation as written
  ResultFacts result;
  int returns_tuple = 0;  // every return gives a tuple of this many items (0: not so), or the annotation says so
};

/// The facts of function `qualified` ("f", "Cls.m") in `source`; found = false when none.
FunctionFacts function_facts(std::string_view source, const std::string& qualified);

/// Every call to a function named `callee` (its last dotted part) inside the innermost
/// function of `source` holding line `line` (only the calls on that line when it is
/// at module level), with `caller` set to that function's qualified name ("" at
/// module level) and `caller_params` to its parameters.
struct CallsIn {
  std::string caller;
  std::vector<std::string> caller_params;
  std::vector<std::string> caller_locals;  // names the caller's body assigns (for, with, = and :=)
  std::vector<CallFacts> calls;
};
CallsIn calls_in(std::string_view source, int line, const std::string& callee);

/// One source parsed once, for asking function_facts and calls_in of it many times
/// (explain asks of each file once per frame and per caller it follows). Throws
/// ts::ParseLimit (an Error) on construction when the text is too large to parse.
class SourceFacts {
 public:
  explicit SourceFacts(std::string source);
  ~SourceFacts();
  SourceFacts(const SourceFacts&) = delete;
  SourceFacts& operator=(const SourceFacts&) = delete;

  FunctionFacts function(const std::string& qualified) const;
  CallsIn calls_in(int line, const std::string& callee) const;
  /// The callee of each call on `line`, as written ("pkg.layer", "self.proj").
  std::vector<std::string> callees_at(int line) const;
  /// The source as given.
  const std::string& text() const;

 private:
  struct Parsed;
  std::unique_ptr<Parsed> p_;
};

}  // namespace sitepatch::python
