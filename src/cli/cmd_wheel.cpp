// sitepatch wheel RECIPE... (--from WHEEL | --download NAME==VERSION) -o DIR: the patched
// wheel, for an image or a private index; --check: whether an environment runs it.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <regex>

#include "commands.hpp"
#include "output_file.hpp"
#include "sitepatch/engine/wheel.hpp"
#include "sitepatch/recipe/version.hpp"
#include "sitepatch/site/wheel.hpp"
#include "sitepatch/util/command.hpp"
#include "sitepatch/util/strings.hpp"
#include "sitepatch/util/temp_folder.hpp"

namespace fs = std::filesystem;

namespace sitepatch::cli {

struct WheelOptions {
  std::vector<std::string> recipes;
  std::string from;
  std::string download;
  std::string out_dir;
  std::string version;
  std::string python;
  bool dry_run = false;
  bool check = false;
};

// wheel_check.cpp: --check against the environment the global options name.
int check_shipped(const GlobalOptions& g, const std::vector<recipe::Recipe>& recipes);

namespace {

// An executable `name` in PATH, or "".
std::string in_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  for (auto& dir : util::split(path ? path : "/usr/bin:/bin", ':'))
    if (!dir.empty() && ::access((dir + "/" + name).c_str(), X_OK) == 0) return dir + "/" + name;
  return "";
}

// A Python in PATH that runs (a pyenv shim for a version not installed does not), or "".
std::string runnable_python(const std::string& name) {
  std::string found = in_path(name);
  if (found.empty()) return "";
  return util::run_captured({found, "-c", "pass"}, util::environment_with({})).status == 0 ? found : "";
}

// --python as given: a path, or a name looked up in PATH.
std::string given_python(const std::string& python) {
  if (python.find('/') != std::string::npos) return python;
  std::string found = in_path(python);
  if (found.empty()) throw Error("wheel --python " + python + ": no such program in PATH", Exit::usage);
  return found;
}

// The Python that compiles the edits: --python, else one of the wheel's tag found in
// PATH (cp311 -> python3.11), else python3.
std::string python_for(const WheelOptions& o, const std::string& wheel_name) {
  if (!o.python.empty()) return given_python(o.python);
  auto name = site::parse_wheel_name(wheel_name);
  for (auto& tag : util::split(name ? name->python : "", '.')) {
    if (tag.size() < 4 || !(util::starts_with(tag, "cp") || util::starts_with(tag, "py"))) continue;
    std::string found = runnable_python("python" + tag.substr(2, 1) + "." + tag.substr(3));
    if (!found.empty()) return found;
  }
  std::string python3 = in_path("python3");
  if (python3.empty()) throw Error("wheel: no python3 in PATH to compile the edits with: give --python PY", Exit::usage);
  return python3;
}

// --download's NAME==VERSION, checked: pip reads anything else as more options or files.
void check_requirement(const std::string& req) {
  static const std::regex kPinned("[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?==([^=<>!~ ;@]+)");
  std::smatch m;
  if (!std::regex_match(req, m, kPinned) || !recipe::Version::parse(m[2].str()))
    throw Error("wheel --download " + util::printable(req) + ": give one pinned distribution, NAME==VERSION", Exit::usage);
}

// `pip download` of one wheel into `dir` (pip's own settings apply: PIP_INDEX_URL, ...).
std::string download(const WheelOptions& o, const std::string& dir) {
  check_requirement(o.download);
  std::string python = o.python.empty() ? in_path("python3") : given_python(o.python);
  if (python.empty()) throw Error("wheel --download: no python3 in PATH to run pip with: give --python PY", Exit::usage);
  auto r = util::run_captured({python, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check",
                               "-q", "-d", dir, "--", o.download},
                              util::environment_with({}));
  std::vector<std::string> wheels;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir, ec))
    if (util::ends_with(e.path().filename().string(), ".whl")) wheels.push_back(e.path().string());
  if (r.status != 0 || wheels.size() != 1) {
    std::string said = util::trim(r.err.size() > 2000 ? r.err.substr(r.err.size() - 2000) : r.err);
    throw Error("wheel --download " + o.download + ": pip download " +
                (r.status != 0 ? "exited " + std::to_string(r.status) : "gave no single wheel") +
                (said.empty() ? "" : ":\n" + util::printable_lines(said)));
  }
  return wheels[0];
}

nlohmann::json wheel_json(const engine::WheelResult& r, const WheelOptions& o) {
  return {{"ok", r.plan.ok()},
          {"source", {{"wheel", r.source_file}, {"sha256", r.source_sha256}}},
          {"name", r.name},
          {"version", {{"from", r.version_from}, {"to", r.version_to}}},
          {"output", r.output},
          {"sha256", or_null(r.output_sha256)},
          {"python", r.python},
          {"pure", r.pure},
          {"notes", r.notes},
          {"written", r.written},
          {"dry_run", o.dry_run},
          {"plan", plan_json(r.plan)}};
}

int build(const GlobalOptions& g, const WheelOptions& o) {
  Output out(g);
  auto recipes = load_recipes(o.recipes);
  if (o.out_dir.empty()) throw Error("wheel: give -o DIR, the folder the patched wheel goes into", Exit::usage);
  std::string tmp;
  struct Cleanup {
    std::string& dir;
    ~Cleanup() {
      std::error_code ec;
      if (!dir.empty()) fs::remove_all(dir, ec);
    }
  } cleanup{tmp};
  engine::WheelRequest req;
  if (!o.download.empty()) {
    tmp = util::make_temp_folder("download");
    req.source = download(o, tmp);
  } else {
    // A link to the wheel (a cache's blob) is read where it leads, under the name given.
    std::error_code ec;
    req.source_name = fs::path(o.from).filename().string();
    req.source = fs::is_symlink(o.from, ec) ? fs::canonical(o.from, ec).string() : o.from;
    if (req.source.empty()) throw Error("wheel --from " + o.from + ": " + ec.message());
  }
  req.python = python_for(o, req.source_name.empty() ? fs::path(req.source).filename().string() : req.source_name);
  req.out_dir = fs::absolute(o.out_dir).lexically_normal().string();
  if (!fs::is_directory(req.out_dir)) throw Error("wheel -o " + o.out_dir + ": no such folder", Exit::usage);
  req.version = o.version;
  req.sitepatch_version = SITEPATCH_VERSION;
  req.dry_run = o.dry_run;
  auto host = host::make_local_host();
  req.before_write = [](const std::string& path) { check_output_file(path, "-o", "wheel"); };
  engine::WheelResult r = engine::build_wheel(*host, std::move(recipes), req);
  if (out.json()) {
    out.document(wheel_json(r, o));
    return int(r.plan.ok() ? Exit::ok : Exit::failed);
  }
  // stdout is the wheel's path (`pip install "$(sitepatch wheel ...)"`); the diff only
  // when it is what was asked for (--dry-run).
  engine::Plan shown = r.plan;
  if (!o.dry_run) shown.files.clear();
  print_plan(out, shown, true);
  for (auto& n : r.notes) out.err("note: " + n);
  if (!r.plan.ok())
    throw Error("wheel: nothing written: an edit fails on " + r.source_file + " (above)", Exit::failed);
  if (o.dry_run) {
    out.err("dry run: " + std::to_string(r.plan.files.size()) + " file(s) would change; " + r.output +
            " was not written");
    return int(Exit::ok);
  }
  out.out(r.output);
  if (!out.quiet())
    out.err("wrote " + fs::path(r.output).filename().string() + ": " + r.name + " " + r.version_from + " -> " +
            r.version_to + ", " + std::to_string(r.plan.files.size()) + " file(s) patched, compiled by " + r.python +
            "; sha256 " + r.output_sha256);
  return int(Exit::ok);
}

}  // namespace

Runner register_wheel(CLI::App& app, const GlobalOptions& g) {
  auto o = std::make_shared<WheelOptions>();
  app.add_option("recipes", o->recipes, "Recipe files (YAML), folders of them (*.yaml in name order), or - for standard input")
      ->required();
  auto from = app.add_option("--from", o->from, "The wheel to patch")->type_name("WHEEL");
  auto dl = app.add_option("--download", o->download,
                           "Fetch the wheel with pip download (pip's index settings apply: PIP_INDEX_URL, ...)")
                ->type_name("NAME==VERSION");
  from->excludes(dl);
  app.add_option("-o,--output-dir", o->out_dir, "The folder the patched wheel is written to")->type_name("DIR");
  app.add_option("--version", o->version,
                 "The patched wheel's version (default: the source's with a local label, 1.2.3+sitepatch.<8 hex of "
                 "the recipes>)")
      ->type_name("VERSION");
  app.add_option("--python", o->python,
                 "The Python that compiles each edited module (default: one of the wheel's tag in PATH, python3.11 for "
                 "cp311, else python3)")
      ->type_name("PY");
  app.add_flag("-n,--dry-run", o->dry_run, "Print the diff the recipes make on the wheel's files; write nothing");
  auto check = app.add_flag("--check", o->check,
                            "Compare the environment (--venv, --host) with these recipes: is what it runs the wheel "
                            "they make, intact (exit 3 if not)? Writes nothing");
  check->excludes(from)->excludes(dl);
  app.footer(
      "The recipes are planned on the wheel's files as apply plans them on an environment: the same\n"
      "locator, the same checks, each edited module compiled by a Python of the wheel's tag when one\n"
      "is in PATH. The new wheel keeps the recipes and where they came from in its dist-info\n"
      "(sitepatch/), its RECORD is rehashed, and it is byte-reproducible: the same recipes on the same\n"
      "wheel give the same sha256. In an environment that installed it, list and verify show it as\n"
      "shipped patched, and apply and sync know its recipes. A wheel with compiled modules is patched\n"
      "in its .py files only; an edit of a module a compiled twin shadows is refused, as apply refuses it.");
  return [&g, o] {
    if (o->check) return check_shipped(g, load_recipes(o->recipes));
    if (o->from.empty() && o->download.empty())
      throw Error("wheel: give --from WHEEL or --download NAME==VERSION (or --check)", Exit::usage);
    return build(g, *o);
  };
}

}  // namespace sitepatch::cli
