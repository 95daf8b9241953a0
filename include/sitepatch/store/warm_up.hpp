#pragma once

namespace sitepatch::store {

/// Starts libgit2's start-up on a thread of its own and returns at once. It reads the
/// system's CA bundle (libgit2 built with mbedTLS), 5-10 ms that a command can spend
/// waiting for its environment (the Python probe, the ssh handshake) instead of after
/// it. The first use of the history waits for it to end.
void warm_up();

}  // namespace sitepatch::store
