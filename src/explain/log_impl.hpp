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

/// The frame a traceback line names: `File "F", line N, in FN` or
/// `<FrameSummary file F, line N in FN>`; nullopt for another line.
std::optional<Frame> frame_line(const std::string& line);

}  // namespace sitepatch::explain::detail
