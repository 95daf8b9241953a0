// sitepatch try RECIPE... -- CMD [ARGS]: CMD runs with the recipes in effect; nothing is
// written to the environment.
#include "commands.hpp"
#include "sitepatch/engine/try.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {

std::vector<std::string>& trailing_command() {
  static std::vector<std::string> command;
  return command;
}

namespace {

// The usage line CLI11 writes, with the command after `--` that try takes past it.
class TryUsage : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string name) const override {
    std::string usage = CLI::Formatter::make_usage(app, std::move(name));
    size_t end = usage.find('\n');
    return usage.insert(end == std::string::npos ? usage.size() : end, " -- CMD [ARGS...]");
  }
};

}  // namespace

Runner register_try(CLI::App& app, const GlobalOptions& g) {
  app.formatter(std::make_shared<TryUsage>());
  auto recipes = std::make_shared<std::vector<std::string>>();
  app.add_option("recipes", *recipes, "Recipe files (YAML), folders of them (*.yaml in name order), or - for standard input")->required();
  app.footer(
      "After the recipes, `--` and the command: `sitepatch try fix.yaml -- python serve.py --warmup`.\n"
      "The command and every Python process it starts (subprocess, multiprocessing, python -m) load the\n"
      "patched modules from the recipes' text; the environment's files, RECORD, __pycache__ and history\n"
      "stay byte for byte as they were. Exit status: the command's (1 when a recipe does not apply).\n"
      "Not in effect: python -I, -E or -S (they ignore PYTHONPATH or site), a module imported before\n"
      "sitecustomize runs (by a .pth file: a warning says so), C extensions.");
  return [&g, recipes] {
    const std::vector<std::string>& command = trailing_command();
    if (command.empty())
      throw Error("try needs the command to run after `--`, e.g. sitepatch try fix.yaml -- python serve.py",
                  Exit::usage);
    auto loaded = load_recipes(*recipes);
    Env env = open_env(g);
    Output out(g);
    say_environment(out, env);
    auto p = engine::plan(*env.session, std::move(loaded));
    std::vector<std::string> files;
    for (auto& f : p.files) files.push_back(f.rel);
    auto document = [&](bool ran, const host::CommandResult& r) {
      auto plan = plan_json(p);
      out.document({{"ok", p.ok()},
                    {"ran", ran},
                    {"command", command},
                    {"files", files},
                    {"edits", plan["edits"]},
                    {"problems", plan["problems"]},
                    {"status", ran ? nlohmann::json(r.status) : nlohmann::json()},
                    {"stdout", r.out},
                    {"stderr", r.err}});
    };
    if (!p.ok()) {
      if (out.json()) {
        document(false, {});
      } else {
        print_plan(out, p, true);
        out.err("sitepatch: try failed: the recipes do not apply; `" + util::join(command, " ") + "` was not run");
      }
      return int(Exit::failed);
    }
    host::CommandRun run = engine::try_run(p, command);
    // `python` is the environment's, as in --check-with and explain --run: the README's
    // `try ... -- python ...` must test the interpreter the fix is for.
    run.env["VIRTUAL_ENV"] = env.session->env.prefix;
    run.path_first_dirs["PATH"] = env.session->env.prefix + "/bin";
    // Said by the host once the run's folder passed its checks: not before a refusal.
    if (!out.json() && !out.quiet())
      run.announce = "sitepatch try: " +
                     (files.empty() ? std::string("nothing to patch (every edit is already there)")
                                    : util::join(files, ", ") + " patched for this run") +
                     "; the environment is not written";
    run.capture = out.json();
    host::CommandResult r = env.session->host.run_command(run);
    if (out.json()) document(true, r);
    return r.status;
  };
}

}  // namespace sitepatch::cli
