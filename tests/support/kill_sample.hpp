#pragma once
// Which steps a kill-at-every-step loop kills at. The local apply and rollback (the path
// every other one shares) kill at every step; the other loops at a sample: their first
// and last steps and a quarter of the rest (at least four), drawn from a seed printed
// with the loop's name. Each run draws a new seed, so over runs every step is killed at.
// SITEPATCH_KILL_SEED=S replays a run's sample; SITEPATCH_KILL_ALL=1 kills at every step.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace testsupport {

/// The steps in 1..steps to kill at in the loop `what`, in order.
inline std::vector<long> kill_steps(long steps, const std::string& what) {
  std::vector<long> all;
  for (long at = 1; at <= steps; ++at) all.push_back(at);
  const char* every = std::getenv("SITEPATCH_KILL_ALL");
  if ((every && std::string(every) == "1") || steps <= 6) return all;
  const char* seed_env = std::getenv("SITEPATCH_KILL_SEED");
  uint64_t seed = seed_env && *seed_env ? std::stoull(seed_env) : std::random_device{}();
  std::mt19937_64 rng(seed);
  std::vector<long> middle(all.begin() + 1, all.end() - 1);
  std::shuffle(middle.begin(), middle.end(), rng);
  size_t take = std::max<size_t>(4, middle.size() / 4);
  middle.resize(std::min(take, middle.size()));
  std::vector<long> out{1, steps};
  out.insert(out.end(), middle.begin(), middle.end());
  std::sort(out.begin(), out.end());
  std::string list;
  for (long at : out) list += (list.empty() ? "" : " ") + std::to_string(at);
  std::cout << what << ": killed at " << out.size() << " of " << steps << " steps (" << list << "), seed " << seed
            << " (SITEPATCH_KILL_SEED=" << seed << " replays it, SITEPATCH_KILL_ALL=1 kills at every step)"
            << std::endl;
  return out;
}

}  // namespace testsupport
