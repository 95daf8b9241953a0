// Every real log in tests/data/dynamo-logs (torch 2.11, see its README) read into its
// exact breaks and frames: the Unsupported exception ("from user code:"), the same with
// TORCHDYNAMO_VERBOSE=1, TORCH_LOGS=graph_breaks (repeats merged) and
// torch._dynamo.explain.
#include <catch2/catch.hpp>

#include <random>

#include "sitepatch/explain/log.hpp"
#include "sitepatch/explain/stack.hpp"
#include "sitepatch/util/strings.hpp"
#include "support/fixture.hpp"

using namespace sitepatch::explain;

namespace {

const std::string kSite = "/srv/model/.venv/lib/python3.12/site-packages/";

std::vector<Break> parse_file(const std::string& name) {
  return parse_log(testsupport::slurp(std::string(SITEPATCH_SOURCE_DIR) + "/tests/data/dynamo-logs/" + name));
}

// "file:line function | code", site-packages shortened to "SITE/".
std::vector<std::string> frames(const Break& b) {
  std::vector<std::string> out;
  for (auto& f : b.frames) {
    std::string file = f.file.rfind(kSite, 0) == 0 ? "SITE/" + f.file.substr(kSite.size()) : f.file;
    out.push_back(file + ":" + std::to_string(f.line) + " " + f.function + (f.code.empty() ? "" : " | " + f.code));
  }
  return out;
}

const std::vector<std::string> kCudaFrames = {
    "/home/ml/serve/model.py:8 forward | if is_cuda_version_at_least(\"12.0\"):",
    "SITE/fakeinfer/jit/cpp_ext.py:31 is_cuda_version_at_least | return get_cuda_version() >= Version(version_str)",
    "SITE/fakeinfer/jit/cpp_ext.py:19 get_cuda_version | txt = subprocess.check_output([nvcc, \"--version\"], text=True)",
    "/usr/lib/python3.12/subprocess.py:466 check_output | return run(*popenargs, stdout=PIPE, timeout=timeout, check=True,",
    "/usr/lib/python3.12/subprocess.py:548 run | with Popen(*popenargs, **kwargs) as process:",
    "/usr/lib/python3.12/subprocess.py:828 __init__ | self._waitpid_lock = threading.Lock()",
};

// The frames graph_breaks prints before the compiled frame: the script and nn.Module's call.
std::vector<std::string> with_script(const std::string& script, int line, std::vector<std::string> rest) {
  std::vector<std::string> out = {
      "/home/ml/serve/" + script + ":" + std::to_string(line) + " <module> | print(float(torch.compile(m)(x)))",
      "SITE/torch/nn/modules/module.py:1779 _wrapped_call_impl | return self._call_impl(*args, **kwargs)",
      "SITE/torch/nn/modules/module.py:1790 _call_impl | return forward_call(*args, **kwargs)",
      "SITE/torch/nn/modules/module.py:1779 _wrapped_call_impl | return self._call_impl(*args, **kwargs)",
      "SITE/torch/nn/modules/module.py:1790 _call_impl | return forward_call(*args, **kwargs)",
  };
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

}  // namespace

TEST_CASE("explain reads the Unsupported exception and its frames from user code", "[explain]") {
  auto breaks = parse_file("fullgraph.txt");
  REQUIRE(breaks.size() == 1);
  const Break& b = breaks[0];
  CHECK(b.format == Format::exception);
  CHECK(b.log_line == 20);
  CHECK(b.reason == "Attempted to call function marked as skipped");
  CHECK(b.operation == "_thread.allocate_lock");
  CHECK(b.explanation.rfind("Dynamo does not know how to trace the builtin `_thread.allocate_lock.`", 0) == 0);
  CHECK(b.repeats == 0);
  CHECK_FALSE(b.suppressed);
  // The traceback above the exception is where Python raised it, not the user's stack.
  CHECK(frames(b) == kCudaFrames);
  CHECK(entry_frame(b) == 1);
  CHECK(last_library_frame(b) == 2);
}

TEST_CASE("explain reads a verbose exception past dynamo's own traceback", "[explain]") {
  auto breaks = parse_file("fullgraph_verbose.txt");
  REQUIRE(breaks.size() == 1);
  CHECK(breaks[0].log_line == 247);
  CHECK(breaks[0].operation == "_thread.allocate_lock");
  CHECK(frames(breaks[0]) == kCudaFrames);
}

TEST_CASE("explain reads every graph_breaks record and merges the suppressed repeats", "[explain]") {
  auto breaks = parse_file("graph_breaks.txt");
  REQUIRE(breaks.size() == 2);
  const Break& cuda = breaks[0];
  CHECK(cuda.format == Format::graph_breaks);
  CHECK(cuda.log_line == 5);
  CHECK(cuda.operation == "_thread.allocate_lock");
  CHECK(cuda.reason == "Attempted to call function marked as skipped");
  CHECK(cuda.at == "/usr/lib/python3.12/subprocess.py:828");
  // Two later records (frames 1/0 and 4/0) repeat it with the stack suppressed.
  CHECK(cuda.repeats == 2);
  CHECK(frames(cuda) == with_script("model.py", 18, {kCudaFrames.begin(), kCudaFrames.end()}));
  CHECK(entry_frame(cuda) == 6);

  const Break& stat = breaks[1];
  CHECK(stat.log_line == 63);
  CHECK(stat.operation == "posix.stat");
  CHECK(stat.at == "<frozen genericpath>:19");
  CHECK(stat.repeats == 1);
  CHECK(frames(stat) ==
        with_script("model.py", 18,
                    {"/home/ml/serve/model.py:10 forward | return fp4_quantize(y).float().sum()",
                     "SITE/fakeinfer/fp4_quantization.py:15 fp4_quantize | get_fp4_quantization_module(\"100\")",
                     "SITE/torch/_dynamo/polyfills/__init__.py:392 getattr_and_trace | return fn(*args[2:], **kwargs)",
                     "SITE/fakeinfer/fp4_quantization.py:11 get_fp4_quantization_module | return "
                     "load_module(f\"fp4_quantization_sm{backend}\")",
                     "SITE/fakeinfer/jit/cpp_ext.py:36 load_module | if os.path.exists(path):",
                     "<frozen genericpath>:19 exists"}));
  // The user's forward calls fp4_quantize; dynamo's polyfill between library frames is torch's.
  CHECK(entry_frame(stat) == 6);
  CHECK(last_library_frame(stat) == 9);
  CHECK(kind_of(stat.frames[7]) == FrameKind::torch);
  CHECK(kind_of(stat.frames[10]) == FrameKind::stdlib);
  CHECK(stdlib_module(stat.frames[10].file) == "genericpath");
}

TEST_CASE("explain reads torch._dynamo.explain's break reasons", "[explain]") {
  auto breaks = parse_file("explain.txt");
  REQUIRE(breaks.size() == 2);
  CHECK(breaks[0].format == Format::explain);
  CHECK(breaks[0].log_line == 20);
  CHECK(breaks[0].operation == "_thread.allocate_lock");
  CHECK(breaks[0].reason == "Attempted to call function marked as skipped");
  // FrameSummary lines carry no source line.
  CHECK(frames(breaks[0]) == std::vector<std::string>{
                                 "/home/ml/serve/model.py:8 forward",
                                 "SITE/fakeinfer/jit/cpp_ext.py:31 is_cuda_version_at_least",
                                 "SITE/fakeinfer/jit/cpp_ext.py:19 get_cuda_version",
                                 "/usr/lib/python3.12/subprocess.py:466 check_output",
                                 "/usr/lib/python3.12/subprocess.py:548 run",
                                 "/usr/lib/python3.12/subprocess.py:828 __init__",
                             });
  CHECK(breaks[1].log_line == 36);
  CHECK(breaks[1].operation == "posix.stat");
  CHECK(frames(breaks[1]) == std::vector<std::string>{
                                 "/home/ml/serve/model.py:10 forward",
                                 "SITE/fakeinfer/fp4_quantization.py:15 fp4_quantize",
                                 "SITE/torch/_dynamo/polyfills/__init__.py:392 getattr_and_trace",
                                 "SITE/fakeinfer/fp4_quantization.py:11 get_fp4_quantization_module",
                                 "SITE/fakeinfer/jit/cpp_ext.py:36 load_module",
                                 "<frozen genericpath>:19 exists",
                             });
}

TEST_CASE("explain reads the gemm logs: a dict of builders and pathlib", "[explain]") {
  const std::vector<std::string> gemm = {
      "/home/ml/serve/model2.py:9 forward | return fp4_gemm(x, self.w).relu().sum()",
      "SITE/fakeinfer/gemm.py:20 fp4_gemm | get_gemm_module(\"100\")",
      "SITE/fakeinfer/gemm.py:16 get_gemm_module | return backend_modules[backend]().build_and_load()",
      "SITE/fakeinfer/jit/core.py:25 build_and_load | if self.aot_path.exists():",
      "/usr/lib/python3.12/pathlib.py:862 exists | self.stat(follow_symlinks=follow_symlinks)",
      "/usr/lib/python3.12/pathlib.py:842 stat | return os.stat(self, follow_symlinks=follow_symlinks)",
  };
  auto full = parse_file("gemm_fullgraph.txt");
  REQUIRE(full.size() == 1);
  CHECK(full[0].operation == "posix.stat");
  CHECK(frames(full[0]) == gemm);

  auto breaks = parse_file("gemm_graph_breaks.txt");
  REQUIRE(breaks.size() == 1);
  CHECK(breaks[0].log_line == 5);
  CHECK(breaks[0].repeats == 1);
  CHECK(breaks[0].at == "/usr/lib/python3.12/pathlib.py:842");
  CHECK(frames(breaks[0]) == with_script("model2.py", 17, gemm));
}

TEST_CASE("explain merges a break shown in two formats and keeps a suppressed one without its first showing",
          "[explain]") {
  std::string exception = testsupport::slurp(std::string(SITEPATCH_SOURCE_DIR) + "/tests/data/dynamo-logs/fullgraph.txt");
  std::string explained = testsupport::slurp(std::string(SITEPATCH_SOURCE_DIR) + "/tests/data/dynamo-logs/explain.txt");
  auto both = parse_log(explained + exception);
  REQUIRE(both.size() == 2);
  CHECK(both[0].repeats == 1);
  CHECK(both[0].frames.size() == 6);

  // A log cut after the first record: the repeat alone, its stack not in the log.
  auto lone = parse_log(
      "V1201 06:06:38.426000 465 torch/_dynamo/symbolic_convert.py:5134] [1/0] [__graph_breaks] Graph break (user "
      "stack suppressed due to duplicate graph break) in user code at /usr/lib/python3.12/subprocess.py:828\n"
      "V1201 06:06:38.426000 465 torch/_dynamo/symbolic_convert.py:5134] [1/0] [__graph_breaks] Graph Break Reason: "
      "Attempted to call function marked as skipped\n"
      "V1201 06:06:38.426000 465 torch/_dynamo/symbolic_convert.py:5134] [1/0] [__graph_breaks]   Developer debug "
      "context: module: _thread, qualname: allocate_lock, skip reason: <missing reason>\n");
  REQUIRE(lone.size() == 1);
  CHECK(lone[0].suppressed);
  CHECK(lone[0].frames.empty());
  CHECK(lone[0].operation == "_thread.allocate_lock");
  CHECK(lone[0].reason == "Attempted to call function marked as skipped");
  CHECK(entry_frame(lone[0]) == -1);

  CHECK(parse_log("Traceback (most recent call last):\nValueError: x\n").empty());
}

TEST_CASE("frames are placed by their path below site-packages, whatever the prefix", "[explain]") {
  CHECK(below_site("/srv/model/.venv/lib/python3.12/site-packages/fakeinfer/gemm.py") == "fakeinfer/gemm.py");
  CHECK(below_site("/usr/lib/python3/dist-packages/click/core.py") == "click/core.py");
  CHECK(below_site("C:/x/Lib/site-packages/a/b.py") == "a/b.py");
  CHECK(below_site("/home/ml/serve/model.py") == "");
  CHECK(stdlib_module("/usr/lib/python3.12/subprocess.py") == "subprocess");
  CHECK(stdlib_module("/opt/conda/lib/python3.11/importlib/__init__.py") == "importlib");
  CHECK(stdlib_module("/opt/conda/lib/python3.11/concurrent/futures/thread.py") == "concurrent.futures.thread");
  CHECK(stdlib_module("<frozen os>") == "os");
  CHECK(stdlib_module("/home/ml/serve/model.py") == "");
  CHECK(kind_of({"/x/site-packages/torch/nn/modules/module.py", 1, "f", ""}) == FrameKind::torch);
  CHECK(kind_of({"/x/site-packages/torchvision/ops.py", 1, "f", ""}) == FrameKind::library);
}

TEST_CASE("explain reads the graph_breaks records of older torch releases", "[explain]") {
  // torch 2.2-2.3: the frames right after the header, dynamo's own traceback after them.
  auto old = parse_log(
      "[__graph_breaks] Graph break: from user code at:\n"
      "[__graph_breaks]   File \"/home/u/m.py\", line 4, in forward\n"
      "[__graph_breaks]     return lib.f(x)\n"
      "[__graph_breaks]   File \"/v/lib/python3.10/site-packages/lib/__init__.py\", line 9, in f\n"
      "[__graph_breaks]     open(p)\n"
      "[__graph_breaks] Traceback (most recent call last):\n"
      "[__graph_breaks]   File \"/v/lib/python3.10/site-packages/torch/_dynamo/symbolic_convert.py\", line 1, in step\n"
      "[__graph_breaks]     self.dispatch()\n"
      "[__graph_breaks] torch._dynamo.exc.Unsupported: call_function BuiltinVariable(open) [] {}\n");
  REQUIRE(old.size() == 1);
  CHECK(old[0].reason == "call_function BuiltinVariable(open) [] {}");
  CHECK(frames(old[0]) == std::vector<std::string>{"/home/u/m.py:4 forward | return lib.f(x)",
                                                   "/v/lib/python3.10/site-packages/lib/__init__.py:9 f | open(p)"});
  // torch 2.4-2.5: "Reason:" then "User code traceback:".
  auto mid = parse_log(
      "V0101 [0/0] [__graph_breaks] Graph break in user code at /v/lib/python3.11/site-packages/lib/io.py:3\n"
      "V0101 [0/0] [__graph_breaks] Reason: Unsupported: call_function BuiltinVariable(open) [] {}\n"
      "V0101 [0/0] [__graph_breaks] User code traceback:\n"
      "V0101 [0/0] [__graph_breaks]   File \"/home/u/m.py\", line 4, in forward\n"
      "V0101 [0/0] [__graph_breaks]   File \"/v/lib/python3.11/site-packages/lib/io.py\", line 3, in read\n");
  REQUIRE(mid.size() == 1);
  CHECK(mid[0].reason == "call_function BuiltinVariable(open) [] {}");
  CHECK(mid[0].at == "/v/lib/python3.11/site-packages/lib/io.py:3");
  CHECK(mid[0].frames.size() == 2);
  CHECK(entry_frame(mid[0]) == 1);
}

namespace {

std::string data_log(const std::string& name) {
  return testsupport::slurp(std::string(SITEPATCH_SOURCE_DIR) + "/tests/data/dynamo-logs/" + name);
}

const std::vector<std::string> kRealLogs = {"explain.txt",           "fullgraph.txt",       "fullgraph_verbose.txt",
                                            "gemm_fullgraph.txt",    "gemm_graph_breaks.txt", "graph_breaks.txt",
                                            "builtins_graph_breaks.txt", "print_fullgraph.txt"};

size_t damage_count(const LogReading& r) {
  size_t n = r.damage.size();
  for (auto& b : r.breaks) n += b.damage.size();
  return n;
}

}  // namespace

TEST_CASE("explain names the operation of print, a Logger method, Tensor.item and .tolist, and keeps dynamo's hints",
          "[explain]") {
  auto breaks = parse_file("builtins_graph_breaks.txt");
  REQUIRE(breaks.size() == 4);
  CHECK(breaks[0].operation == "print");
  CHECK(breaks[0].reason == "Failed to trace builtin operator");
  CHECK(breaks[1].operation == "logging.Logger.warning");
  CHECK(breaks[2].operation == "torch.Tensor.item");
  CHECK(breaks[3].operation == "torch.Tensor.tolist");
  CHECK(useful_hints(breaks[2]) ==
        std::vector<std::string>{"Set `torch._dynamo.config.capture_scalar_outputs = True` or `export "
                                 "TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1` to include these operations in the captured "
                                 "graph."});
  CHECK(useful_hints(breaks[1]) ==
        std::vector<std::string>{"Add the logging method to `torch._dynamo.config.ignore_logging_functions`."});
  // "Please report an issue to PyTorch." is printed for every break of its kind: kept in
  // hints, left out of the useful ones.
  CHECK(breaks[0].hints.size() == 3);
  REQUIRE(useful_hints(breaks[0]).size() == 2);
  CHECK(useful_hints(breaks[0])[1].find("reorderable_logging_functions") != std::string::npos);
  // The thread-lock break's hints are all boilerplate.
  CHECK(useful_hints(parse_file("fullgraph.txt")[0]).empty());

  auto fullgraph = parse_file("print_fullgraph.txt");
  REQUIRE(fullgraph.size() == 1);
  CHECK(fullgraph[0].format == Format::exception);
  CHECK(fullgraph[0].operation == "print");
  CHECK(same_break(fullgraph[0], breaks[0]));
  CHECK_FALSE(same_break(fullgraph[0], breaks[1]));
}

TEST_CASE("explain reads an Unsupported message printed without its exception's name (print(e))", "[explain]") {
  std::string log = data_log("fullgraph.txt");
  std::string printed = log.substr(log.find("torch._dynamo.exc.Unsupported: ") + 31);
  auto r = read_log("Unsupported " + printed);
  CHECK(damage_count(r) == 0);
  REQUIRE(r.breaks.size() == 1);
  CHECK(r.breaks[0].reason == "Unsupported Attempted to call function marked as skipped");
  CHECK(r.breaks[0].operation == "_thread.allocate_lock");
  CHECK(frames(r.breaks[0]) == kCudaFrames);
}

TEST_CASE("every real log reads whole: no damage", "[explain]") {
  for (auto& name : kRealLogs) {
    INFO(name);
    auto r = read_log(data_log(name));
    CHECK(!r.breaks.empty());
    CHECK(damage_count(r) == 0);
  }
}

TEST_CASE("a log cut before \"from user code:\" or inside a traceback says what is missing", "[explain]") {
  std::string log = data_log("fullgraph.txt");
  auto cut = read_log(log.substr(0, log.find("from user code:")));
  REQUIRE(cut.breaks.size() == 1);
  CHECK(cut.breaks[0].damage ==
        std::vector<std::string>{"its user stack (\"from user code:\") is missing: the log ends first"});
  // The stack taken out of the middle: the next line ends the record.
  std::string removed = log.substr(0, log.find("from user code:")) + log.substr(log.find("Set TORCHDYNAMO_VERBOSE"));
  auto without = read_log(removed);
  REQUIRE(without.breaks.size() == 1);
  CHECK(without.breaks[0].damage == std::vector<std::string>{"its user stack (\"from user code:\") is missing"});

  // graph_breaks: the header names the innermost frame, so a stack cut short shows.
  std::string gb = data_log("graph_breaks.txt");
  auto lines = sitepatch::util::split(gb, '\n');
  std::string upto;
  for (size_t k = 0; k < 36; ++k) upto += lines[k] + "\n";
  auto short_stack = read_log(upto);
  REQUIRE(!short_stack.breaks.empty());
  REQUIRE(short_stack.breaks[0].damage.size() == 1);
  CHECK(short_stack.breaks[0].damage[0].rfind("its user code traceback stops at ", 0) == 0);
  CHECK(short_stack.breaks[0].damage[0].find(", before /usr/lib/python3.12/subprocess.py:828 where it broke: frames "
                                             "are missing: the log ends first") != std::string::npos);

  // Every cut of every real log: a break read from it is whole, or the damage says why not.
  for (auto& name : kRealLogs) {
    auto all = sitepatch::util::split(data_log(name), '\n');
    std::string text;
    for (auto& l : all) {
      text += l + "\n";
      for (auto& b : read_log(text).breaks) {
        if (!b.damage.empty() || b.frames.empty() || b.at.empty()) continue;
        INFO(name << " cut after " << text.size() << " bytes");
        CHECK(b.frames.back().file + ":" + std::to_string(b.frames.back().line) == b.at);
      }
    }
  }
}

TEST_CASE("a log with 300 flipped bytes is never read as clean", "[explain]") {
  for (auto& name : kRealLogs) {
    std::string clean = data_log(name);
    for (unsigned seed = 1; seed <= 25; ++seed) {
      std::mt19937 rng(seed);
      std::string damaged = clean;
      for (int k = 0; k < 300; ++k) damaged[rng() % damaged.size()] = char(rng() % 256);
      INFO(name << " seed " << seed);
      CHECK(damage_count(read_log(damaged)) > 0);
    }
  }
  // One flipped byte in the exception's first line hides the break: the near-miss says so.
  std::string log = data_log("fullgraph.txt");
  log[log.find("torch._dynamo.exc.Unsupported") + 7] = '#';
  auto r = read_log(log);
  CHECK(r.breaks.empty());
  REQUIRE(r.damage.size() >= 1);
  CHECK(r.damage[0].log_line == 20);
  CHECK(r.damage[0].what ==
        "a damaged \"torch._dynamo.exc.Unsupported:\" line: the break it starts cannot be read");
}

TEST_CASE("explain reads a break's graph-break id and page, and places a skipped function no library frame calls",
          "[explain]") {
  // torch 2.13's exception for a torch function on dynamo's skip list, called from the
  // user's own code: the skipped function is the only place a fix can go.
  const std::string log =
      "torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped\n"
      "  Explanation: Dynamo developers have intentionally marked that the function `is_ninja_available` in file "
      "`/v/lib/python3.11/site-packages/torch/utils/cpp_extension.py` should not be traced.\n"
      "  Hint: Avoid calling the function `is_ninja_available`.\n"
      "\n"
      "  Developer debug context: module: torch.utils.cpp_extension, qualname: is_ninja_available, skip reason: "
      "file matches MOD_SKIPLIST (/v/lib/python3.11/site-packages/torch/utils)\n"
      "\n"
      " For more details about this graph break, please visit: "
      "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0007.html\n"
      "\n"
      "from user code:\n"
      "   File \"/tmp/nj/r.py\", line 4, in f\n"
      "    if is_ninja_available():\n";
  auto breaks = parse_log(log);
  REQUIRE(breaks.size() == 1);
  const Break& b = breaks[0];
  CHECK(b.graph_break_id == "GB0007");
  CHECK(b.graph_break_url == "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0007.html");
  CHECK(b.operation == "torch.utils.cpp_extension.is_ninja_available");
  REQUIRE(b.frames.size() == 2);
  CHECK(b.frames[1].file == "/v/lib/python3.11/site-packages/torch/utils/cpp_extension.py");
  CHECK(b.frames[1].function == "is_ninja_available");
  CHECK(b.frames[1].skipped);
  CHECK(b.frames[1].line == 0);
  CHECK(kind_of(b.frames[1]) == FrameKind::library);
  CHECK(entry_frame(b) == 1);

  // Called from a library frame: that frame is the place; nothing is added.
  std::string from_library = log;
  from_library += "  File \"/v/lib/python3.11/site-packages/kern/ops.py\", line 9, in use_kernel\n"
                  "    return is_ninja_available()\n";
  auto inside = parse_log(from_library);
  REQUIRE(inside.size() == 1);
  CHECK(inside[0].frames.size() == 2);
  CHECK_FALSE(inside[0].frames.back().skipped);
  // An older torch's log has no page: no id.
  CHECK(parse_log(log.substr(0, log.find(" For more details")) + log.substr(log.find("\nfrom user code:")))[0]
            .graph_break_id.empty());
}
