// sitepatch apply RECIPE...: plan, then write all of it or none of it.
#include <algorithm>

#include "commands.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {

Runner register_apply(CLI::App& app, const GlobalOptions& g) {
  struct Opts {
    std::vector<std::string> recipes;
    bool dry_run = false;
    bool force = false;
    bool system = false;
  };
  auto o = std::make_shared<Opts>();
  app.add_option("recipes", o->recipes, "Recipe files (YAML), folders of them (*.yaml in name order), or - for standard input")->required();
  app.add_flag("-n,--dry-run", o->dry_run, "Print what would change, and refuse what apply would refuse (same exit); write nothing");
  app.add_flag("--force", o->force, "Apply even when the installed version does not match `requires:`, when the recipe says `on-upgrade: warn|fail` after an upgrade, or when new code uses names the module never binds");
  app.add_flag("--system", o->system, "Also write into folders this environment shares but does not own (the system's or a base interpreter's site-packages, a .pth folder; the history goes with the folder's owner), and files a Debian package or an EXTERNALLY-MANAGED Python owns");
  return [&g, o] {
    auto loaded = load_recipes(o->recipes);
    Env env = open_env(g);
    env.session->force = o->force;
    env.session->system = o->system;
    Output out(g);
    say_environment(out, env);
    auto r = engine::apply(*env.session, std::move(loaded), o->dry_run);
    const auto& p = r.plan;
    if (out.json()) {
      auto j = plan_json(p);
      j["written"] = r.written;
      j["dry_run"] = o->dry_run;
      j["commit"] = or_null(r.commit);
      j["pyc_removed"] = r.pyc_removed;
      j["recovered"] = r.recovered;
      j["recovered_files"] = r.recovered_files;
      out.document(j);
    } else {
      for (auto& note : r.recovered) out.err(note);
      print_plan(out, p);
    }
    if (!p.ok() && !r.recovered_files.empty()) {
      // Not "nothing was written": the earlier apply's files were (exit 4, as the contract says).
      if (!out.json())
        out.err("sitepatch: apply failed; nothing of it was written, but finishing the interrupted apply above wrote " +
                std::to_string(r.recovered_files.size()) + " file(s), which stay as that apply planned them");
      return int(Exit::partial);
    }
    if (!p.ok()) {
      if (!out.json()) out.err("sitepatch: apply failed; nothing was written");
      return int(Exit::failed);
    }
    if (out.json()) return int(Exit::ok);
    std::vector<std::string> ids, skipped, fixed;
    for (auto& rec : p.recipes) {
      bool skip = std::any_of(p.edits.begin(), p.edits.end(), [&](auto& e) {
        return e.recipe_id == rec.id && e.state == engine::EditState::skipped;
      });
      bool upstream = std::count(p.forget.begin(), p.forget.end(), rec.id) > 0;
      (skip ? skipped : upstream ? fixed : ids).push_back(rec.id);
    }
    std::vector<std::string> why;
    if (!skipped.empty()) why.push_back(util::join(skipped, ", ") + " skipped");
    if (!fixed.empty()) why.push_back(util::join(fixed, ", ") + " already in the installed version");
    if (!r.written && !o->dry_run && ids.empty())
      out.err("nothing written: " + util::join(why, "; "));
    else if (o->dry_run)
      out.err("dry run: " + std::to_string(p.files.size()) + " file(s) would change; nothing was written");
    else if (!r.written)
      out.err("nothing to do: " + util::join(ids, ", ") + " already applied");
    else
      out.err("applied " + util::join(ids, ", ") + ": " + std::to_string(p.files.size()) +
              " file(s) changed, " + std::to_string(r.pyc_removed.size()) +
              " .pyc removed; history in " + env.session->state_dir);
    return int(Exit::ok);
  };
}

}  // namespace sitepatch::cli
