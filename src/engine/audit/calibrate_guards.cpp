// What the environment's dynamo holds as a constant for assume_constant_result
// (calibrate.hpp): one Python process probes every kind of argument explain --run's
// constancy analysis may call a constant, and the answer is kept per environment and
// torch version beside rules --calibrate's.
#include <nlohmann/json.hpp>

#include "engine/audit/calibration_cache.hpp"
#include "engine/python_answer.hpp"
#include "sitepatch/engine/calibrate.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {
namespace {

// Each kind of argument python/constancy_guards.cpp may rest a constant on, as a line
// that gives such a value of tensor `x` to `lookup` (assume_constant_result on a file
// read). A new kind there needs its probe here; one without a probe is not offered.
const std::vector<std::pair<std::string, std::string>>& probes() {
  static const std::vector<std::pair<std::string, std::string>> p = {
      {"device", "return x + lookup(x.device)"},
      {"device.type", "return x + lookup(x.device.type)"},
      {"device.index", "return x + lookup(x.device.index)"},
      {"dtype", "return x + lookup(x.dtype)"},
      {"is_cuda", "return x + lookup(x.is_cuda)"},
      {"is_cpu", "return x + lookup(x.is_cpu)"},
      {"is_meta", "return x + lookup(x.is_meta)"},
      {"is_sparse", "return x + lookup(x.is_sparse)"},
      {"is_quantized", "return x + lookup(x.is_quantized)"},
      {"is_mps", "return x + lookup(x.is_mps)"},
      {"ndim", "return x + lookup(x.ndim)"},
      {"layout", "return x + lookup(x.layout)"},
      {"dim()", "return x + lookup(x.dim())"},
      {"size()", "return x + lookup(x.size(0))"},
      {"shape[i]", "return x + lookup(x.shape[0])"},
      {"shape unpacked", "a, b = x.shape\nreturn x + lookup(a)"},
      {"is_floating_point()", "return x + lookup(x.is_floating_point())"},
      {"is_complex()", "return x + lookup(x.is_complex())"},
      {"element_size()", "return x + lookup(x.element_size())"},
      {"get_device()", "return x + lookup(x.get_device())"},
      {"is_contiguous()", "return x + lookup(x.is_contiguous())"},
      {kMethodOfModuleObject, "return x + SETTINGS.get('abc')"},
  };
  return p;
}

// argv[1]: [{key, probe}]. Each probe's function is called eagerly on five tensors, then
// compiled (fullgraph, the eager backend: guards are dynamo's, not the backend's) and
// called on the same five: two of one shape and dtype, one of another dtype (a guard
// must recompile), then two of other sizes (automatic dynamic makes the size symbolic).
constexpr const char* kGuardScript = R"PY(import json, os, sys, tempfile, time
start = time.time()
try:
    import torch
    import torch._dynamo
except BaseException as e:
    sys.stdout.write("sitepatch-guards: " + json.dumps({"error": "%s: %s" % (type(e).__name__, e)}) + "\n")
    sys.exit(0)
compiler = getattr(torch, "compiler", None)
decorate = getattr(compiler, "assume_constant_result", None) or getattr(torch._dynamo, "assume_constant_result", None)
if decorate is None:
    sys.stdout.write("sitepatch-guards: " + json.dumps({"error": "torch %s has no assume_constant_result" % torch.__version__}) + "\n")
    sys.exit(0)
fd, PATH = tempfile.mkstemp()
os.write(fd, b"sitepatch")
os.close(fd)
def probe_value(key):
    with open(PATH) as f:  # what dynamo cannot trace
        f.read()
    return sum(map(ord, repr(key))) % 97  # another argument, another value
lookup = decorate(probe_value)
class Settings:
    def get(self, key):
        return probe_value(key)
Settings.get = decorate(Settings.get)
SETTINGS = Settings()
def first_line(e):
    lines = str(e).strip().splitlines()
    return ("%s: %s" % (type(e).__name__, lines[0] if lines else ""))[:200]
out = {}
for item in json.loads(sys.argv[1]):
    ns = {"torch": torch, "lookup": lookup, "SETTINGS": SETTINGS}
    inputs = [torch.ones(2, 3), torch.full((2, 3), 2.0), torch.ones(2, 3, dtype=torch.float64),
              torch.ones(4, 3), torch.ones(5, 3)]
    try:
        exec("def fn(x):\n    " + item["probe"].replace("\n", "\n    ") + "\n", ns)
        want = [ns["fn"](x) for x in inputs]
    except BaseException as e:
        out[item["key"]] = {"state": "not_run", "why": first_line(e)}
        continue
    torch._dynamo.reset()
    compiled = torch.compile(ns["fn"], fullgraph=True, backend="eager")
    verdict = {"state": "held"}
    for i, (x, w) in enumerate(zip(inputs, want)):
        sizes = "x".join(map(str, x.shape))
        try:
            got = compiled(x)
        except BaseException as e:
            state = "held_static" if i >= 3 else "breaks"
            verdict = {"state": state, "why": first_line(e)}
            break
        if got.dtype != w.dtype or got.shape != w.shape or not torch.equal(got, w):
            verdict = {"state": "wrong", "why": "compiled gives %s where eager gives %s, for a %s %s input" % (
                got.flatten()[0].item(), w.flatten()[0].item(), sizes, str(x.dtype).replace("torch.", ""))}
            break
    out[item["key"]] = verdict
torch._dynamo.reset()
os.unlink(PATH)
sys.stdout.write("sitepatch-guards: " + json.dumps({"torch": torch.__version__, "seconds": time.time() - start,
                                                    "guards": out}) + "\n")
)PY";

GuardProbe::State guard_state_of(const std::string& s) {
  if (s == "held") return GuardProbe::held;
  if (s == "held_static") return GuardProbe::held_static;
  if (s == "breaks") return GuardProbe::breaks;
  if (s == "wrong") return GuardProbe::wrong;
  return GuardProbe::not_run;
}

}  // namespace

const char* guard_state_json(GuardProbe::State s) {
  switch (s) {
    case GuardProbe::held: return "held";
    case GuardProbe::held_static: return "held_static";
    case GuardProbe::breaks: return "breaks";
    case GuardProbe::wrong: return "wrong";
    case GuardProbe::not_run: return "not_run";
  }
  return "not_run";
}

namespace {

GuardCalibration guards_from_json(const nlohmann::json& j) {
  GuardCalibration c;
  c.torch = j.value("torch", "");
  c.seconds = j.value("seconds", 0.0);
  nlohmann::json guards = j.value("guards", nlohmann::json::object());  // kept: items() refers to it
  for (auto& [key, g] : guards.items())
    c.guards[key] = {guard_state_of(g.value("state", "")), g.value("why", "")};
  return c;
}

nlohmann::json guards_to_json(const GuardCalibration& c) {
  nlohmann::json guards = nlohmann::json::object();
  for (auto& [key, g] : c.guards) guards[key] = {{"state", guard_state_json(g.state)}, {"why", g.why}};
  return {{"torch", c.torch}, {"seconds", c.seconds}, {"guards", guards}};
}

// A kept answer serves only when it answers every probe asked now (a newer sitepatch
// may probe more kinds).
bool complete(const GuardCalibration& c) {
  for (auto& [key, probe] : probes())
    if (!c.guards.count(key)) return false;
  return true;
}

}  // namespace

std::string guard_state_name(GuardProbe::State s) {
  switch (s) {
    case GuardProbe::held: return "held";
    case GuardProbe::held_static: return "held while sizes stay";
    case GuardProbe::breaks: return "breaks";
    case GuardProbe::wrong: return "wrong";
    case GuardProbe::not_run: return "not run";
  }
  return "not run";
}

GuardCalibration calibrate_guards(Session& s, bool use_kept) {
  GuardCalibration out;
  std::string version = detail::torch_version(s);
  if (version.empty()) {
    out.error = "torch is not installed in " + s.env.prefix;
    return out;
  }
  // Keyed by the torch installed (its folder) and the interpreter's version, not by the
  // environment: what dynamo holds is torch's answer, and venvs that share one torch (a
  // .pth, --system-site-packages) share it.
  const site::Distribution* torch = s.distributions().find("torch");
  std::string which = util::sha256_hex(s.host.name() + "\n" + (torch ? torch->site_dir : "") + "\n" +
                                       s.env.version + "\n" + s.env.cache_tag)
                          .substr(0, 16);
  std::string file = detail::cache_file(s, version);  // <dir>/<environment>-<version>.json
  if (!file.empty()) file = file.substr(0, file.rfind('/') + 1) + "guards-" + which + "-" + file.substr(file.rfind('-') + 1);
  if (use_kept)
    if (auto j = detail::read_kept(file)) {
      GuardCalibration kept = guards_from_json(*j);
      kept.kept = true;
      if (complete(kept)) return kept;
    }
  nlohmann::json items = nlohmann::json::array();
  for (auto& [key, probe] : probes()) items.push_back({{"key", key}, {"probe", probe}});
  host::CommandResult res;
  nlohmann::json j = detail::python_answer(s, kGuardScript, items.dump(), "sitepatch-guards: ", &res);
  if (!j.is_object()) {
    out.error = "the probe in " + s.env.python + " ended with status " + std::to_string(res.status) +
                " and no answer: " + util::printable(util::trim(res.err).substr(0, 300));
    return out;
  }
  if (j.contains("error")) {
    out.error = util::printable(j["error"].get<std::string>());
    return out;
  }
  out = guards_from_json(j);
  detail::keep(file, guards_to_json(out));
  return out;
}

}  // namespace sitepatch::engine
