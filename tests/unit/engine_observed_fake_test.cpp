// explain --run's fakes written from what a run saw the real function do (observe_hook.py's
// lines): dtypes as seen, shapes as expressions of the inputs' shapes that fit every call,
// and no fake for a function that changes or returns a view of its input.
#include <catch2/catch.hpp>

#include "engine/proofs/run_impl.hpp"

using namespace sitepatch::engine;

namespace {

// A quantize kernel: bf16 [8, 32] in, uint8 [8, 16] and fp32 [8] out; then the same with
// the first dimension doubled, and with the last.
const std::string kQuantize =
    "noise\n"
    "sitepatch-observe: {\"function\": \"packquant:int4_quantize\", \"calls\": [{\"inputs\": {\"input\": "
    "{\"dtype\": \"bfloat16\", \"shape\": [8, 32], \"device\": \"cpu\"}}, \"outputs\": [{\"dtype\": \"uint8\", "
    "\"shape\": [8, 16], \"device\": \"cpu\"}, {\"dtype\": \"float32\", \"shape\": [8], \"device\": \"cpu\"}], "
    "\"tuple\": true, \"mutated\": [], \"aliased\": [], \"resized\": [{\"inputs\": {\"input\": {\"dtype\": "
    "\"bfloat16\", \"shape\": [16, 32], \"device\": \"cpu\"}}, \"outputs\": [{\"dtype\": \"uint8\", \"shape\": "
    "[16, 16], \"device\": \"cpu\"}, {\"dtype\": \"float32\", \"shape\": [16], \"device\": \"cpu\"}], \"tuple\": "
    "true, \"mutated\": [], \"aliased\": []}, {\"inputs\": {\"input\": {\"dtype\": \"bfloat16\", \"shape\": [8, 64], "
    "\"device\": \"cpu\"}}, \"outputs\": [{\"dtype\": \"uint8\", \"shape\": [8, 32], \"device\": \"cpu\"}, "
    "{\"dtype\": \"float32\", \"shape\": [8], \"device\": \"cpu\"}], \"tuple\": true, \"mutated\": [], "
    "\"aliased\": []}]}]}\n";

}  // namespace

TEST_CASE("observed fakes: each output's dtype, and its shape as expressions of the inputs' shapes",
          "[engine][explain]") {
  auto seen = read_observations(kQuantize);
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].function == "packquant:int4_quantize");
  REQUIRE(seen[0].calls.size() == 1);
  CHECK(seen[0].calls[0].resized.size() == 2);
  std::string why;
  CHECK(observed_fake(seen[0], {"input"}, why) ==
        "return input.new_empty((input.shape[0], input.shape[1] // 2), dtype=torch.uint8), "
        "input.new_empty((input.shape[0],), dtype=torch.float32)\n");
  CHECK(why.empty());
}

TEST_CASE("observed fakes: one call seen gives static shapes, said, and a changed or viewed input gives none",
          "[engine][explain]") {
  std::string one =
      "sitepatch-observe: {\"function\": \"k:f\", \"calls\": [{\"inputs\": {\"x\": {\"dtype\": \"float16\", "
      "\"shape\": [4, 6], \"device\": \"cpu\"}, \"n\": {\"value\": 3}}, \"outputs\": [{\"dtype\": \"float32\", "
      "\"shape\": [4, 3], \"device\": \"cpu\"}], \"tuple\": false, \"mutated\": [], \"aliased\": [], "
      "\"resize_failed\": [\"RuntimeError: only 6 columns\"]}]}\n";
  auto seen = read_observations(one);
  REQUIRE(seen.size() == 1);
  std::string why;
  CHECK(observed_fake(seen[0], {"x"}, why) == "return x.new_empty((4, 3), dtype=torch.float32)\n");
  CHECK(why == "static shapes: a dimension fits no expression of the inputs' shapes in every run seen");

  std::string mutated = one;
  mutated.replace(mutated.find("\"mutated\": []"), 13, "\"mutated\": [\"x\"]");
  seen = read_observations(mutated);
  CHECK(observed_fake(seen[0], {"x"}, why).empty());
  CHECK(why == "it changes its input `x` (seen in the run): a custom op that does needs mutates_args, which this does "
               "not write");

  std::string aliased = one;
  aliased.replace(aliased.find("\"aliased\": []"), 13, "\"aliased\": [\"0:x\"]");
  seen = read_observations(aliased);
  CHECK(observed_fake(seen[0], {"x"}, why).empty());
  CHECK(why == "its output 0:x shares the input's storage (seen in the run): a custom op must return new tensors");

  // A line of the program's own that holds the mark mid-line, or is no JSON: not read.
  CHECK(read_observations("print('sitepatch-observe: {}')\nsitepatch-observe: not json\n").empty());
}
