#pragma once
// Private to src/explain: the log as numbered lines, and the reading of one record.
#include <optional>
#include <string>
#include <vector>

#include "sitepatch/explain/log.hpp"

namespace sitepatch::explain::detail {

struct Line {
  std::string text;  // without its line end
  int number = 0;    // 1-based
};

std::vector<Line> split_lines(std::string_view text);
bool indented(const std::string& l);
bool blank(const std::string& l);

/// One record's text (its format's prefixes removed; "User code traceback:" before the
/// frames): the reason, explanation, operation and frames. Format and place are the
/// caller's to set.
Break read_record(const std::vector<std::string>& body);

/// Adds to `b` which of the lines [from, to) hold bytes that are not text (a flipped
/// byte, a cut multibyte character).
void check_text(const std::vector<Line>& lines, size_t from, size_t to, Break& b);

/// Not UTF-8, or a control character other than a tab or ESC (a terminal's colours).
bool not_text(const std::string& line);

/// Whether some stretch of `text` is `marker` in at least three of four bytes.
bool near_marker(std::string_view text, std::string_view marker);

/// What a line outside every record shows of a record that was there: a line only a
/// record holds, or a record's first line damaged past reading. "" for another line.
std::string stray(const std::string& line);

/// The frame a traceback line names: `File "F", line N, in FN` or
/// `<FrameSummary file F, line N in FN>`; nullopt for another line.
std::optional<Frame> frame_line(const std::string& line);

}  // namespace sitepatch::explain::detail
