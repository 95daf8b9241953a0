#pragma once
// A script as its functions see it: what explain walks from when the user's function is in
// a script run as the program (repro.py). The script's own main part (seeding, making
// inputs, compiling, printing) is not on any path from its functions, yet walking it reads
// torch's whole import graph; only what binds the names its functions read is kept. Pure.
#include <string>
#include <string_view>

namespace sitepatch::python {

/// `source` with each top-level statement blanked (spaces, its newlines kept, so every
/// line is where it was) that binds no name the module's functions and classes read:
/// expression statements, assignments to other names, and compound statements holding
/// neither an import, a definition nor such an assignment. Imports, definitions and the
/// assignments they need stay byte for byte. `source` itself when its names cannot be
/// known (a star import, a syntax error).
std::string functions_view(std::string_view source);

}  // namespace sitepatch::python
