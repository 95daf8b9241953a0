#pragma once
// Where each frame of a break's stack lives, judged from its path alone (no
// environment needed): the user's code, a library below site-packages, torch's own
// machinery, or the standard library; and which frame is the library's entry.
#include <string>
#include <string_view>

#include "sitepatch/explain/log.hpp"

namespace sitepatch::explain {

enum class FrameKind {
  user,     // the user's own code (not below site-packages, not the standard library)
  library,  // below a site-packages (or dist-packages) folder
  torch,    // torch's own frames (nn.Module's call, dynamo's polyfills): not the library's code
  stdlib,   // the standard library, or a frozen module
};
const char* to_string(FrameKind k);

/// The path below the last site-packages/ or dist-packages/ segment, "" when none:
/// frames are matched by it, so a log from another prefix or machine maps too.
std::string below_site(std::string_view file);

/// The standard library module a frame's file is ("subprocess", "genericpath" for
/// `<frozen genericpath>`), "" when it is not one.
std::string stdlib_module(std::string_view file);

FrameKind kind_of(const Frame& f);

/// Index of the library frame the user's code called: the first library frame after
/// the last frame of the user's own code; -1 when the break is not inside a library.
int entry_frame(const Break& b);

/// Index of the last library frame (the one whose call leads to the operation), -1 when none.
int last_library_frame(const Break& b);

}  // namespace sitepatch::explain
