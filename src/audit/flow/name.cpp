// The pool Name interns into: one per process, never emptied (it holds the distinct names
// of the code read, a few MB at most), guarded for walks that run on several threads.
#include "audit/flow/name.hpp"

#include <mutex>
#include <unordered_set>

namespace sitepatch::audit::flow {

const std::string& Name::none() {
  static const std::string none;
  return none;
}

const std::string& Name::intern(std::string_view s) {
  if (s.empty()) return none();
  static std::mutex lock;
  static std::unordered_set<std::string>* pool = new std::unordered_set<std::string>();  // outlives statics
  std::lock_guard<std::mutex> hold(lock);
  return *pool->emplace(s).first;  // a node set: an element stays where it is
}

}  // namespace sitepatch::audit::flow
