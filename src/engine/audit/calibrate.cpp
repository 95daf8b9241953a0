// rules --calibrate: every rule's probe run inside torch.compile(fullgraph=True,
// backend="eager") by the environment's own torch, one process for all of them; the
// answer kept on this machine per environment and torch version, for audit and explain.
#include "sitepatch/engine/calibrate.hpp"

#include <cctype>
#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "engine/audit/calibration_cache.hpp"
#include "engine/python_answer.hpp"
#include "sitepatch/util/file.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/safe_path.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {

using detail::cache_file;
using detail::cache_prefix;
using detail::torch_version;

namespace {

// argv[1]: [{id, probe, module}]; `module` (the rule's first segment) is imported for
// the probe when it can be. Each probe runs once eagerly (one that cannot run here, a
// module not installed, is no answer), then compiled whole; one JSON line at the end.
constexpr const char* kScript = R"(import json, os, sys, tempfile, time
start = time.time()
try:
    import torch
except BaseException as e:
    sys.stdout.write("sitepatch-calibrate: " + json.dumps({"error": "%s: %s" % (type(e).__name__, e)}) + "\n")
    sys.exit(0)
import ctypes, datetime, fcntl, http.client, importlib, io, logging, pathlib, subprocess, threading, urllib.request
LOCK = threading.Lock()  # a lock made outside the compiled function, as a module's is
try:
    import filelock
except ImportError:
    filelock = None
LOG = logging.getLogger("sitepatch.calibrate")
out = {}
with tempfile.TemporaryDirectory() as d:
    fd = os.open(os.path.join(d, "lock"), os.O_CREAT | os.O_RDWR)
    x = torch.ones(2)
    for item in json.loads(sys.argv[1]):
        ns = dict(globals())
        ns.update(d=d, fd=fd, x=x)
        try:
            if item["module"] and item["module"] not in ns:
                ns[item["module"]] = importlib.import_module(item["module"])
        except BaseException:
            pass
        try:
            exec("def fn(x):\n    " + item["probe"] + "\n    return x + 1\n", ns)
            ns["fn"](x)
        except BaseException as e:
            out[item["id"]] = {"state": "not_run", "why": ("%s: %s" % (type(e).__name__, e))[:200]}
            continue
        torch._dynamo.reset()
        try:
            torch.compile(ns["fn"], fullgraph=True, backend="eager")(x)
            out[item["id"]] = {"state": "traced"}
        except BaseException as e:
            lines = str(e).strip().splitlines()
            out[item["id"]] = {"state": "breaks", "why": ("%s: %s" % (type(e).__name__, lines[0] if lines else ""))[:200]}
    os.close(fd)
sys.stdout.write("sitepatch-calibrate: " + json.dumps({"torch": torch.__version__, "seconds": time.time() - start,
                                                       "rules": out}) + "\n")
)";

// Whether any calibration of this environment is kept: asked before the torch version,
// which costs a look at the environment (a round trip over --host) that most audits
// never need.
bool any_kept(Session& s) {
  std::string prefix = cache_prefix(s);
  if (prefix.empty()) return false;
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::path(prefix).parent_path();
  std::string stem = std::filesystem::path(prefix).filename().string();
  for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec))
    if (it->path().filename().string().rfind(stem, 0) == 0) return true;
  return false;
}

const char* state_name(ProbeResult::State s) {
  switch (s) {
    case ProbeResult::traced: return "traced";
    case ProbeResult::breaks: return "breaks";
    case ProbeResult::not_run: return "not_run";
  }
  return "not_run";
}

nlohmann::json to_json(const Calibration& c) {
  nlohmann::json rules = nlohmann::json::object();
  for (auto& [id, r] : c.rules) rules[id] = {{"state", state_name(r.state)}, {"why", r.why}, {"probe", r.probe}};
  return {{"torch", c.torch}, {"where", c.where}, {"seconds", c.seconds}, {"rules", rules}};
}

Calibration from_json(const nlohmann::json& j) {
  Calibration c;
  c.torch = j.value("torch", "");
  c.where = j.value("where", "");
  c.seconds = j.value("seconds", 0.0);
  nlohmann::json rules = j.value("rules", nlohmann::json::object());
  for (auto& [id, r] : rules.items()) {
    ProbeResult p;
    std::string st = r.value("state", "");
    p.state = st == "traced" ? ProbeResult::traced : st == "breaks" ? ProbeResult::breaks : ProbeResult::not_run;
    p.why = r.value("why", "");
    p.probe = r.value("probe", "");
    c.rules[id] = std::move(p);
  }
  return c;
}

}  // namespace

namespace detail {

std::string torch_version(Session& s) {
  const site::Distribution* d = s.distributions().find("torch");
  return d ? d->version : "";
}

// $XDG_CACHE_HOME/sitepatch/calibration/<environment>-: what every kept calibration of
// this environment's file name starts with; "" when there is no home to keep it in.
std::string cache_prefix(Session& s) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  std::string base = xdg && *xdg ? xdg : home && *home ? std::string(home) + "/.cache" : "";
  if (base.empty()) return "";
  return base + "/sitepatch/calibration/" + util::sha256_hex(s.host.name() + "\n" + s.env.python).substr(0, 24) + "-";
}

// <prefix><what><torch version>.json, for the torch installed now.
std::string cache_file(Session& s, const std::string& version, const std::string& what) {
  std::string prefix = cache_prefix(s);
  if (prefix.empty() || version.empty()) return "";
  prefix += what;
  std::string safe;
  for (char c : version) safe += std::isalnum(static_cast<unsigned char>(c)) || c == '.' ? c : '_';
  return prefix + safe + ".json";
}

void keep(const std::string& file, const nlohmann::json& j) {
  if (file.empty()) return;
  try {
    // What is kept there decides what audit flags and explain offers: only in folders
    // nobody else can swap or write (sitepatch runs as root beside other users).
    if (auto why = util::make_safe_folder(file.substr(0, file.rfind('/')))) throw Error(*why);
    util::AtomicFile f(file);
    f.write(j.dump(2) + "\n");
    f.commit();
  } catch (const Error& e) {
    spdlog::warn("the calibration is not kept: {}", e.what());
  }
}

std::optional<nlohmann::json> read_kept(const std::string& file) {
  if (file.empty()) return std::nullopt;
  if (auto why = util::unsafe_path(file)) {
    spdlog::warn("not using the calibration kept in {}: {}", file, *why);
    return std::nullopt;
  }
  auto text = util::read_file(file);
  if (!text) return std::nullopt;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  return j;
}

}  // namespace detail

Calibration calibrate(Session& s, const audit::RuleSet& rules) {
  nlohmann::json items = nlohmann::json::array();
  std::map<std::string, std::string> probes;
  for (auto& r : rules.all())
    if (!r.probe.empty()) {
      std::string head = r.match.substr(0, r.match.find('.'));
      bool name = !head.empty() && head != "*" && head[0] != '{';
      items.push_back({{"id", r.id}, {"probe", r.probe}, {"module", name ? head : ""}});
      probes[r.id] = r.probe;
    }
  if (items.empty()) throw Error("no rule has a probe to calibrate (`probe:` in a rules file)", Exit::usage);
  std::string version = torch_version(s);
  if (version.empty()) throw Error("torch is not installed in " + s.env.prefix + ": there is no dynamo to calibrate against");
  host::CommandResult res;
  nlohmann::json j = detail::python_answer(s, kScript, items.dump(), "sitepatch-calibrate: ", &res);
  if (!j.is_object())
    throw Error("the calibration in " + s.env.python + " ended with status " + std::to_string(res.status) +
                " and no answer: " + util::printable(util::trim(res.err).substr(0, 400)));
  if (j.contains("error"))
    throw Error("torch does not import in " + s.env.python + ": " + util::printable(j["error"].get<std::string>()));
  j["where"] = s.host.name() + ":" + s.env.python;
  Calibration cal = from_json(j);
  for (auto& [id, r] : cal.rules) r.probe = probes[id];
  detail::keep(cache_file(s, version), to_json(cal));
  return cal;
}

std::optional<Calibration> kept_calibration(Session& s) {
  if (!any_kept(s)) return std::nullopt;
  auto j = detail::read_kept(cache_file(s, torch_version(s)));
  if (!j) return std::nullopt;
  return from_json(*j);
}

audit::RuleSet without_traced(const audit::RuleSet& rules, const Calibration& cal, std::vector<std::string>& left) {
  std::vector<audit::Rule> kept;
  for (auto& r : rules.all()) {
    auto it = cal.rules.find(r.id);
    if (it != cal.rules.end() && it->second.state == ProbeResult::traced && it->second.probe == r.probe) {
      left.push_back(r.id);
      continue;
    }
    kept.push_back(r);
  }
  audit::RuleSet out;
  out.add(std::move(kept));
  return out;
}

}  // namespace sitepatch::engine
