#include "sitepatch/util/budget.hpp"

#include <algorithm>

#include <malloc.h>

namespace sitepatch::util {

ByteBudget::Lease::~Lease() {
  if (owner_) owner_->give_back(bytes_);
}

ByteBudget::Lease ByteBudget::take(std::size_t bytes) {
  std::unique_lock<std::mutex> lock(mutex_);
  // First come, first served: a large request waiting for the others to finish is not
  // overtaken by small ones forever.
  const std::size_t ticket = next_ticket_++;
  freed_.wait(lock, [&] { return ticket == serving_ && (held_ == 0 || held_ + bytes <= cap_); });
  ++serving_;
  held_ += bytes;
  peak_ = std::max(peak_, held_);
  lock.unlock();
  freed_.notify_all();  // the next ticket may fit too
  return Lease(this, bytes);
}

void ByteBudget::give_back(std::size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    held_ -= bytes;
  }
  freed_.notify_all();
}

void return_freed_memory() {
#ifdef __GLIBC__
  ::malloc_trim(0);
#endif
}

std::size_t ByteBudget::peak() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return peak_;
}

}  // namespace sitepatch::util
