// sitepatch sync [RECIPE|DIR]...: the environment ends with exactly these recipes applied
// (a project's patches/ folder, after every install): apply, reapply, replace, roll back.
#include <filesystem>

#include "commands.hpp"
#include "sitepatch/engine/sync.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {

namespace {

struct SyncOptions {
  std::vector<std::string> recipes;
  bool check = false;
  bool dry_run = false;
  bool keep_others = false;
  bool force = false;
};

nlohmann::json sync_json(const engine::SyncResult& r, const SyncOptions& o) {
  nlohmann::json steps = nlohmann::json::array();
  for (auto& st : r.steps)
    steps.push_back({{"id", st.id}, {"step", std::string(engine::step_name(st.kind))}, {"why", st.why},
                     {"recipe", or_null(st.recipe)}});
  nlohmann::json files = nlohmann::json::array();
  for (auto& f : r.rolled.files) files.push_back(f.rel);
  for (auto& f : r.applied.plan.files)
    if (std::find(files.begin(), files.end(), f.rel) == files.end()) files.push_back(f.rel);
  return {{"ok", true},
          {"in_sync", !r.changes()},
          {"steps", steps},
          {"written", r.written},
          {"check", o.check},
          {"dry_run", o.dry_run},
          {"files", files},
          {"commit", or_null(r.commit)},
          {"notes", r.notes}};
}

void print_steps(const Output& out, const engine::SyncResult& r) {
  size_t w = 0;
  for (auto& st : r.steps) w = std::max(w, st.id.size());
  for (auto& st : r.steps)
    out.out(fmt::format("{:<9}  {:<{}}  {}{}", engine::step_name(st.kind), st.id, w, st.why,
                        st.recipe.empty() || st.kind == engine::SyncStep::in_sync ? "" : " (" + st.recipe + ")"));
}

std::string summary(const engine::SyncResult& r) {
  std::vector<std::string> parts;
  for (auto kind : {engine::SyncStep::apply, engine::SyncStep::reapply, engine::SyncStep::replace,
                    engine::SyncStep::rollback}) {
    std::vector<std::string> ids;
    for (auto& st : r.steps)
      if (st.kind == kind) ids.push_back(st.id);
    if (!ids.empty()) parts.push_back(std::string(engine::step_name(kind)) + " " + util::join(ids, ", "));
  }
  return util::join(parts, "; ");
}

// The recipes of the set: the arguments, or ./patches when there are none.
std::vector<std::string> set_paths(const std::vector<std::string>& given) {
  if (!given.empty()) return given;
  if (std::filesystem::is_directory("patches")) return {"patches"};
  throw Error("name the recipes to sync (files or folders of them); with none, sync reads ./patches, which is not "
              "here",
              Exit::usage);
}

}  // namespace

Runner register_sync(CLI::App& app, const GlobalOptions& g) {
  auto o = std::make_shared<SyncOptions>();
  app.add_option("recipes", o->recipes,
                 "Recipe files, or folders of them (*.yaml, *.yml); default: ./patches");
  app.add_flag("--check", o->check,
               "Write nothing; exit 3 and print the steps when the environment is not in sync (for CI and "
               "ansible --check)");
  app.add_flag("-n,--dry-run", o->dry_run, "Print the steps sync would take; write nothing");
  app.add_flag("--keep-others", o->keep_others, "Leave applied patches that are not in the set applied");
  app.add_flag("--force", o->force,
               "Apply even when new code uses names the module never binds (requires: is never forced: such a "
               "recipe is left out)");
  app.footer(
      "Each recipe of the set ends applied as it is now: applied when missing, put back when an upgrade\n"
      "or a reinstall took its edits away, rolled back and applied again when its content changed under\n"
      "the same id; applied patches outside the set are rolled back (--keep-others leaves them). One lock\n"
      "for all of it, one record in the history at the end. A patch whose files someone else changed\n"
      "stops the sync before it writes (the message names the fix). Exit 3: a recipe left out (its\n"
      "requires: excludes the installed version; the rest is applied), or --check found work to do.\n"
      "After every install: pip install -r requirements.txt && sitepatch sync patches/");
  return [&g, o] {
    auto loaded = load_recipes(set_paths(o->recipes), true);  // an emptied folder: roll every patch back
    Env env = open_env(g);
    env.session->force = o->force;
    Output out(g);
    bool write = !o->check && !o->dry_run;
    if (write) say_environment(out, env);
    engine::SyncResult r = engine::sync(*env.session, std::move(loaded), o->keep_others, write);
    bool left_out = r.any(engine::SyncStep::left_out);
    int code = (o->check && r.changes()) || left_out ? int(Exit::not_intact) : int(Exit::ok);
    if (out.json()) {
      out.document(sync_json(r, *o));
      return code;
    }
    for (auto& n : r.notes) out.err(n);
    if (!out.quiet() || r.changes() || left_out) print_steps(out, r);
    if (out.quiet())
      ;  // the steps (when any) and the exit say it
    else if (!r.changes())
      out.err(left_out ? "in sync but for what was left out" : "in sync: nothing to do");
    else if (!write)
      out.err(std::string(o->check ? "not in sync" : "dry run") + ": sync would " + summary(r) + "; nothing was written");
    else
      out.err("synced: " + summary(r) + "; history in " + env.session->state_dir);
    if (left_out)
      out.err("left out of the set: " + [&] {
        std::vector<std::string> ids;
        for (auto& st : r.steps)
          if (st.kind == engine::SyncStep::left_out) ids.push_back(st.id);
        return util::join(ids, ", ");
      }() + " (exit 3)");
    return code;
  };
}

}  // namespace sitepatch::cli
