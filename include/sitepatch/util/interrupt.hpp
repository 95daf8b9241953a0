#pragma once
// A command that must not stop half-way (an apply whose check has not passed yet) notes
// SIGINT, SIGTERM and SIGHUP instead of dying on them, and stops at the next point where
// the environment is whole again.

namespace sitepatch::util {

/// While one lives, the first SIGINT, SIGTERM or SIGHUP is noted (interrupted() says
/// which) instead of ending the process; a second of the same kind ends it as usual
/// (SA_RESETHAND), so a user who insists is never ignored. Nested, the
/// outermost one acts. The main thread's alone.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;
};

/// The signal an InterruptGuard noted since it was made, or 0.
int interrupted();

/// "SIGINT", "SIGTERM", "SIGHUP", else "signal N".
const char* signal_name(int sig);

}  // namespace sitepatch::util
