#pragma once

namespace sitepatch::store {

/// Starts libgit2's start-up on a thread of its own and returns at once. It reads the
/// system's CA bundle (libgit2 built with mbedTLS), 5-10 ms that a command can spend
/// waiting for its environment (the Python probe, the ssh handshake) instead of after
/// it. The first use of the history waits for it to end.
void warm_up();

/// Waits for warm_up's thread when one was started. main calls it before it returns:
/// exit runs the libraries' atexit handlers (OpenSSL's cleanup among them) while a
/// thread still inside git_libgit2_init would use what they free, a crash seen on a
/// command that fails before it reads the history.
void settle();

}  // namespace sitepatch::store
