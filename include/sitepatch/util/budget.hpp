#pragma once
// A cap on how many bytes of work threads hold at once (memory bounded by size, not by
// how many items are in flight).
#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace sitepatch::util {

class ByteBudget {
 public:
  explicit ByteBudget(std::size_t cap) : cap_(cap) {}

  /// Bytes held until destroyed.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& o) noexcept : owner_(o.owner_), bytes_(o.bytes_) { o.owner_ = nullptr; }
    Lease& operator=(Lease&&) = delete;
    ~Lease();

   private:
    friend class ByteBudget;
    Lease(ByteBudget* owner, std::size_t bytes) : owner_(owner), bytes_(bytes) {}
    ByteBudget* owner_ = nullptr;
    std::size_t bytes_ = 0;
  };

  /// Waits until `bytes` fit under the cap beside what others hold; more than the cap
  /// is granted when nothing else is held (it waits for the others to finish).
  Lease take(std::size_t bytes);
  /// The most held at once so far (for tests and logs).
  std::size_t peak() const;

 private:
  void give_back(std::size_t bytes);
  const std::size_t cap_;
  std::size_t held_ = 0, peak_ = 0;
  std::size_t next_ticket_ = 0, serving_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
};

/// Hands the heap freed so far back to the system. glibc keeps each thread's freed
/// memory in that thread's arena: without this, after large trees are freed on many
/// threads, the process holds the sum of every thread's peak, not the peak at once.
void return_freed_memory();

}  // namespace sitepatch::util
