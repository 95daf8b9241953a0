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
  /// Not in dynamo's stack: the function dynamo skips ("marked as skipped"), placed from its
  /// explanation's file and debug context where no library frame calls it (line 0 until
  /// the file is read: its def's line then).
  bool skipped = false;
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
  std::vector<std::string> hints;  // dynamo's own "Hint:" lines, in order, each once
  std::string graph_break_id;  // newer torch's id of the kind of break ("GB0007"), "" when the log has none
  std::string graph_break_url;  // and its page ("https://.../gb/gb0007.html")
  int repeats = 0;           // later records of the same break merged into this one
  bool suppressed = false;   // only "user stack suppressed" records were seen: no frames
  /// What the log lacks for this break to be read whole ("its user stack (\"from user
  /// code:\") is missing: the log ends first"); empty when it was read whole.
  std::vector<std::string> damage;
};

/// A line of the log that belongs to no break although it is part of one in dynamo's
/// formats (a graph_breaks line after its record's header was lost), or bytes that are
/// not text inside a record: the log was cut or damaged there.
struct LogDamage {
  int log_line = 0;   // the first line of the damaged stretch
  int last_line = 0;  // its last (the same when it is one line)
  std::string what;
};

/// A log read whole: its breaks and the damage that no break carries.
struct LogReading {
  std::vector<Break> breaks;
  std::vector<LogDamage> damage;
};

/// Every break in `text`, in the order the log first shows them. Graph-break records
/// whose user stack dynamo suppressed as a duplicate are merged into the break they
/// repeat (same place, same operation), as are identical breaks shown in two formats.
std::vector<Break> parse_log(std::string_view text);

/// Whether `a` and `b` are one break shown twice: the same operation at the same place
/// (one stack the innermost part of the other: the exception's starts at the compiled
/// frame, graph_breaks' at the script), or, with a stack suppressed, the same "at".
bool same_break(const Break& a, const Break& b);

/// Dynamo's hints for `b` that say what to do about this break (a config switch, an
/// alternative), without those it prints for every break of a kind ("Please report an
/// issue to PyTorch", "If it is a third-party C/C++ Python extension ...").
std::vector<std::string> useful_hints(const Break& b);

/// As parse_log, with the lines no break explains: a reader that must not mistake a
/// damaged log for a clean one checks both `damage` and each break's.
LogReading read_log(std::string_view text);

}  // namespace sitepatch::explain
