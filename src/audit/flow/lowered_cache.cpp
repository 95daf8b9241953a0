// Lowered modules kept for the process (see ir.hpp's lower_kept): keyed by the module's
// name and its text's length and hash, so a patched text is lowered anew. Bounded by the
// bytes of text behind what it holds; past that it starts over.
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "audit/flow/ir.hpp"
#include "sitepatch/audit/flow.hpp"

namespace sitepatch::audit::flow {

namespace {

constexpr size_t kMostText = size_t(64) << 20;

std::atomic<bool> keeping{false};

struct Kept {
  std::mutex lock;
  std::unordered_map<std::string, std::shared_ptr<const Module>> modules;
  size_t text = 0;
};

Kept& kept() {
  static Kept* k = new Kept();  // outlives the statics of walks that end at exit
  return *k;
}

}  // namespace

void keep_lowered(bool on) { keeping = on; }

Module lower_kept(std::string_view source, const std::string& module, bool is_package) {
  if (!keeping) return lower(source, module, is_package);
  std::string key = module + (is_package ? "/" : ":") + std::to_string(source.size()) + ":" +
                    std::to_string(std::hash<std::string_view>{}(source));
  Kept& k = kept();
  {
    std::lock_guard<std::mutex> hold(k.lock);
    if (auto it = k.modules.find(key); it != k.modules.end()) return *it->second;
  }
  Module m = lower(source, module, is_package);
  std::lock_guard<std::mutex> hold(k.lock);
  if (k.text + source.size() > kMostText) {
    k.modules.clear();
    k.text = 0;
  }
  if (k.modules.emplace(key, std::make_shared<const Module>(m)).second) k.text += source.size();
  return m;
}

}  // namespace sitepatch::audit::flow
