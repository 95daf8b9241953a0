#pragma once
// A module's text cut into the units a merge by statement works on.
#include <string>
#include <string_view>
#include <vector>

namespace sitepatch::python {

/// `text` cut into runs of whole lines, each one statement as a person reads it: a
/// simple statement with all its lines (a call over five lines, a docstring), a compound
/// statement's header (`def f(a,\n b):`), a decorator, a comment line, a blank line.
/// Joined, the units are `text` byte for byte. A text that does not parse cleanly is cut
/// as far as its tree goes (an error node's lines stay one unit).
std::vector<std::string> statement_units(std::string_view text);

}  // namespace sitepatch::python
