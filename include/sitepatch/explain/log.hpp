#pragma once
// What torch dynamo wrote about the code it refused, read from a log: the
// `torch._dynamo.exc.Unsupported` exception ("from user code:"), TORCH_LOGS=graph_breaks
// records ("User code traceback:"), and torch._dynamo.explain's "Break Reasons". Pure:
// text in, breaks and frames out; the frames are mapped to code elsewhere.
#include <string>
#include <string_view>
#include <vector>

namespace sitepatch::explain {

/// One frame of the user stack dynamo printed, as it printed it.
struct Frame {
  std::string file;      // as written: "/srv/.../site-packages/x/y.py", "<frozen genericpath>"
  int line = 0;          // 1-based
  std::string function;  // the code object's name: "forward", "__init__", "<module>"
  std::string code;      // the source line shown under it, trimmed ("" when the format shows none)
};

/// Which of dynamo's formats a break was read from.
enum class Format { exception, graph_breaks, explain };
const char* to_string(Format f);

/// One graph break or Unsupported error.
struct Break {
  Format format = Format::exception;
  int log_line = 0;          // 1-based line of the log where it starts
  std::string reason;        // "Attempted to call function marked as skipped"
  std::string explanation;   // dynamo's "Explanation:" text, "" when none
  std::string operation;     // "_thread.allocate_lock" (debug context, or the builtin named), "" when unknown
  std::string at;            // graph_breaks' "in user code at FILE:LINE", "" otherwise
  std::vector<Frame> frames; // the user stack, outermost first (empty when suppressed)
  int repeats = 0;           // later records of the same break merged into this one
  bool suppressed = false;   // only "user stack suppressed" records were seen: no frames
};

/// Every break in `text`, in the order the log first shows them. Graph-break records
/// whose user stack dynamo suppressed as a duplicate are merged into the break they
/// repeat (same place, same operation), as are identical breaks shown in two formats.
std::vector<Break> parse_log(std::string_view text);

}  // namespace sitepatch::explain
