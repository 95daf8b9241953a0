// explain --run's verdict on a run: how it ended, read from its last traceback, and
// why a run that failed another way than dynamo declining is never kept.
#include <catch2/catch.hpp>

#include "engine/proofs/run_impl.hpp"

using namespace sitepatch::engine;

TEST_CASE("run_end reads the last traceback's exception, chained ones and dynamo's raised one",
          "[engine][explain]") {
  std::string internal =
      "W1204 graph break\nTraceback (most recent call last):\n  File \"a.py\", line 3, in <module>\n"
      "TypeError: 'NoneType' object has no attribute 'split'\n\nThe above exception was the direct cause of the "
      "following exception:\n\nTraceback (most recent call last):\n  File \"repro.py\", line 5, in <module>\n"
      "    print(f(x))\ntorch._dynamo.exc.InternalTorchDynamoError: TypeError: 'NoneType' object has no attribute "
      "'split'\n\nfrom user code:\n   File \"lib.py\", line 4, in f\n";
  RunEnd e = run_end(internal);
  CHECK(e.type == "torch._dynamo.exc.InternalTorchDynamoError");
  CHECK(e.message == "TypeError: 'NoneType' object has no attribute 'split'");
  CHECK(e.raised.empty());

  std::string observed =
      "Traceback (most recent call last):\n  File \"repro.py\", line 5, in <module>\n"
      "torch._dynamo.exc.Unsupported: Observed exception\n  Explanation: Dynamo found no exception handler\n\n"
      "  Developer debug context: raised exception AttributeError('split')\n";
  e = run_end(observed);
  CHECK(e.type == "torch._dynamo.exc.Unsupported");
  CHECK(e.raised == "AttributeError('split')");

  CHECK(run_end("no traceback at all\n").type.empty());
}

TEST_CASE("improves keeps a fix only on evidence", "[engine][explain]") {
  RunCounts before;
  before.status = 1;
  before.unsupported = true;
  before.library_breaks = 1;
  std::string why;
  // Dynamo itself failed: rejected with the exception, though the break is gone.
  RunCounts internal = before;
  internal.unsupported = false;
  internal.failure = "torch._dynamo.exc.InternalTorchDynamoError: TypeError: x";
  CHECK_FALSE(improves(before, internal, {"posix.stat at lib.py:3"}, {}, why));
  CHECK(why == "the run failed another way (exit 1): torch._dynamo.exc.InternalTorchDynamoError: TypeError: x");
  // Past the break, but the traced code now raises: rejected, never "got further".
  RunCounts raises = before;
  raises.raised = "AttributeError('split')";
  CHECK_FALSE(improves(before, raises, {"posix.stat at lib.py:3"}, {"Observed exception at lib.py:9"}, why));
  CHECK(why == "the traced code now raises AttributeError('split') (dynamo: Observed exception)");
  // Past the break to the next one: kept.
  CHECK(improves(before, before, {"posix.stat at lib.py:3"}, {"open at lib.py:9"}, why));
  CHECK(why == "dynamo got past posix.stat at lib.py:3 and stops at open at lib.py:9");
  // A run that worked before must not fail now.
  RunCounts ran;
  ran.graphs = 2;
  ran.graph_breaks = 3;
  RunCounts broke = before;
  CHECK_FALSE(improves(ran, broke, {}, {}, why));
  CHECK(why == "the command failed (exit 1) where it ran before");
}
