#pragma once
// The one error type domain code throws; `main` catches it once and turns it into
// a message and an exit code (DESIGN.md "Contract with users").
#include <stdexcept>
#include <string>

namespace sitepatch {

/// Exit codes users and scripts rely on.
enum class Exit : int {
  ok = 0,          // done
  failed = 1,      // failed, nothing was changed
  usage = 2,       // bad usage or invalid recipe
  not_intact = 3,  // verify found a patch not as sitepatch left it
  partial = 4,     // a write failed part way and could not be put back: the message
                   // names each file's state and the command that fixes it
};

/// A failure a user can act on: the message names the file, line, target.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, Exit code = Exit::failed)
      : std::runtime_error(message), code_(code) {}
  Exit code() const { return code_; }

 private:
  Exit code_;
};

}  // namespace sitepatch
