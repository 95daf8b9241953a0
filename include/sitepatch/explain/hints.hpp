#pragma once
// Hints are data: what an operation dynamo refused means, and which traceable body
// replaces a library function that reaches it. The shipped set
// (recipes/hints/dynamo.yaml) is carried inside the binary; a user's file (--hints)
// adds to it. Parsing does no I/O.
#include <string>
#include <string_view>
#include <vector>

namespace sitepatch::explain {

struct Hint {
  std::string id;
  std::string operation;          // pattern for dynamo's operation ("_thread.allocate_lock")
  std::string means;              // what that operation is
  std::string calls;              // pattern for the call a library function makes (as resolved)
  std::vector<std::string> holds; // words the function's source must hold
  std::string replace_body;       // the new body; {returns}: the function's return annotation
  std::string ensure_import;
  std::string why;
  std::string origin;             // the file it came from ("builtin:dynamo.yaml" when shipped)
  int line = 0;
};

/// The function a fix hint is tried on: its source, and what audit resolved it to call.
struct FunctionText {
  std::string source;               // its lines, `def` to its end
  std::string returns;              // its return annotation ("Version"), "" when none
  std::vector<std::string> calls;   // the names it calls, resolved through imports
};

class HintSet {
 public:
  /// Adds `hints`; a later hint with an id already loaded replaces the earlier one.
  void add(std::vector<Hint> hints);
  const std::vector<Hint>& all() const { return hints_; }
  /// What the operation means, from the first hint whose `operation` matches; "" when none.
  std::string meaning(std::string_view operation) const;
  /// The first fix hint that fits `f` (a call matching `calls`, every word of `holds`,
  /// and a return annotation if the body needs one), or nullptr.
  const Hint* fix_for(const FunctionText& f) const;

 private:
  std::vector<Hint> hints_;
};

/// `replace_body` with {returns} filled in.
std::string body_for(const Hint& h, const FunctionText& f);

/// Parses a hints file (`hints: [...]`). Throws sitepatch::Error (exit 2) listing every
/// problem as "file:line:col: message".
std::vector<Hint> parse_hints(std::string_view text, const std::string& path);

/// The shipped hints (recipes/hints/dynamo.yaml, embedded at build time).
std::vector<Hint> builtin_hints();

}  // namespace sitepatch::explain
