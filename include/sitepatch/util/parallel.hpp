#pragma once
#include <cstddef>
#include <functional>

namespace sitepatch::util {

/// The threads parallel_for uses: $SITEPATCH_THREADS when it is a number from 1 to
/// 1024, else one per core.
std::size_t thread_count();

/// Calls fn(0..n-1) on up to thread_count() threads (the caller's included);
/// the first exception thrown by any call is rethrown here after all have stopped.
void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn);

}  // namespace sitepatch::util
