#include "sitepatch/util/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace sitepatch::util {

std::size_t thread_count() {
  // Read once: a number of threads, 1 to 1024 (anything else: the cores).
  static const std::size_t n = [] {
    if (const char* env = std::getenv("SITEPATCH_THREADS")) {
      char* end = nullptr;
      long v = std::strtol(env, &end, 10);
      if (end != env && *end == '\0' && v >= 1 && v <= 1024) return std::size_t(v);
    }
    return std::size_t(std::max(1u, std::thread::hardware_concurrency()));
  }();
  return n;
}

void parallel_for(std::size_t n, const std::function<void(std::size_t)>& fn) {
  std::size_t workers = std::min<std::size_t>(n, thread_count());
  if (workers <= 1) {
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        next = n;  // stop handing out work
      }
    }
  };
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < workers; ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace sitepatch::util
