#pragma once
// Dynamo logs written by hand for the tests that need one the real logs do not cover.
namespace e2e {

/// A graph break whose frames are all the user's and the standard library's: no
/// installed library is involved, so explain names none.
inline constexpr const char* kUserCodeBreakLog =
    "torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped\n"
    "  Developer debug context: module: _thread, qualname: allocate_lock, skip reason: <missing reason>\n"
    "\n"
    "from user code:\n"
    "   File \"/home/ml/serve/probe.py\", line 7, in forward\n"
    "    out = subprocess.check_output([\"nvidia-smi\"], text=True)\n"
    "  File \"/usr/lib/python3.12/subprocess.py\", line 828, in __init__\n"
    "    self._waitpid_lock = threading.Lock()\n";

}  // namespace e2e
