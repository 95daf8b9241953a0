#pragma once
#include <cstddef>
#include <functional>

namespace sitepatch::util {

/// Calls fn(0..n-1) on up to hardware_concurrency threads (the caller's included);
/// the first exception thrown by any call is rethrown here after all have stopped.
void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn);

}  // namespace sitepatch::util
