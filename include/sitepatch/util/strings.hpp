#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace sitepatch::util {

std::vector<std::string> split(std::string_view s, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);
std::string trim(std::string_view s);
/// Whether `word` occurs in `text` with no letter, digit or '_' on either side.
bool contains_word(std::string_view text, std::string_view word);
/// Levenshtein distance, for "did you mean" suggestions.
size_t edit_distance(std::string_view a, std::string_view b);
/// Up to `n` of `candidates` closest to `word`, closest first (ties keep input order).
std::vector<std::string> nearest(std::string_view word, const std::vector<std::string>& candidates,
                                 size_t n = 3);
/// Splits a command line into words as a POSIX shell would ('...', "...", \),
/// without expanding anything; throws std::invalid_argument on an open quote.
std::vector<std::string> shell_split(std::string_view line);
/// `s` single-quoted for a POSIX shell.
std::string shell_quote(std::string_view s);
/// `s` as one shell word for a command shown to a user: bare when every character is
/// safe (letters, digits, _ - . / : @ % + = ,), else shell_quote(s).
std::string shell_word(std::string_view s);
/// `s` safe to print on a terminal: control characters (C0, DEL, C1), and bytes that are
/// not UTF-8, as \xNN. For text read from files others may write.
std::string printable(std::string_view s);
/// printable(), but '\n' and '\t' are kept: for text of many lines (another program's
/// stderr), which they only lay out.
std::string printable_lines(std::string_view s);
/// Standard base64 (with padding), both ways; decode throws std::invalid_argument.
std::string base64_encode(std::string_view data);
std::string base64_decode(std::string_view text);

}  // namespace sitepatch::util
