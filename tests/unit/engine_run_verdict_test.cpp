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

TEST_CASE("the differential proof's lines are summed over processes, and a mismatch rejects a run that compiles",
          "[engine][explain]") {
  RunCounts c;
  read_counts(
      "noise\nsitepatch-dynamo-counts: {\"graphs\": 1, \"graph_breaks\": 0, \"pid\": 4}\n"
      "sitepatch-diff: {\"calls\": 2, \"vs_record\": 1, \"vs_eager\": 2, \"recorded\": 0, \"mismatch\": null, "
      "\"notes\": [], \"pid\": 4}\n"
      "print('sitepatch-diff: {\"calls\": 9}') in a line of the program's own\n"
      "sitepatch-diff: {\"calls\": 1, \"vs_record\": 0, \"vs_eager\": 1, \"recorded\": 0, \"mismatch\": \"call 1: "
      "compiled output has dtype torch.bfloat16 where eager gives torch.float32 (against this run's eager code)\", "
      "\"notes\": [\"the eager call 0 of compiled function 0 raised ValueError\"], \"pid\": 5}\n",
      c);
  CHECK(c.graphs == 1);
  CHECK(c.checked.calls == 3);
  CHECK(c.checked.vs_record == 1);
  CHECK(c.checked.vs_eager == 3);
  CHECK(c.checked.mismatch ==
        "call 1: compiled output has dtype torch.bfloat16 where eager gives torch.float32 (against this run's eager code)");
  CHECK(c.checked.notes == std::vector<std::string>{"the eager call 0 of compiled function 0 raised ValueError"});

  RunCounts before;
  before.status = 1;
  before.unsupported = true;
  before.library_breaks = 1;
  std::string why;
  c.status = 0;
  CHECK(c.compiled());
  CHECK_FALSE(improves(before, c, {"posix.stat at kvq/__init__.py:12"}, {}, why));
  CHECK(why ==
        "compiled differs from eager: call 1: compiled output has dtype torch.bfloat16 where eager gives torch.float32 "
        "(against this run's eager code)");

  c.checked.mismatch.clear();
  CHECK(improves(before, c, {"posix.stat at kvq/__init__.py:12"}, {}, why));
  CHECK(c.checked.how() ==
        "compiled equals eager on 3 calls (1 against the unpatched program's outputs, 3 against the patched code run "
        "eagerly)");
  CHECK(Checked{}.how() ==
        "compiles: the command called no compiled function on tensors, so that it compiles is all that was shown");
}
