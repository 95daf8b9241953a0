// sitepatch reapply [ID...|--all]: after an upgrade or a reinstall, the recipes the
// history recorded are applied again, with apply's checks; no recipe file needed.
#include <algorithm>

#include "commands.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {

Runner register_reapply(CLI::App& app, const GlobalOptions& g) {
  struct Opts : ApplyOptions {
    std::vector<std::string> ids;
    bool all = false;
  };
  auto o = std::make_shared<Opts>();
  app.add_option("ids", o->ids, "Applied patches to put back (sitepatch list names them)");
  app.add_flag("--all", o->all, "Every patch an upgrade or a reinstall took away (what status says needs reapplying)");
  add_apply_options(app, *o);
  return [&g, o] {
    if (o->ids.empty() == !o->all)
      throw Error(o->all ? "give ids or --all, not both" : "name the patches to reapply, or give --all",
                  Exit::usage);
    Env env = open_env(g);
    Output out(g);
    // A reapply killed half-way is finished first: its files are as it planned them, and
    // judged before that they would look changed by someone else.
    if (!o->dry_run)
      for (auto& note : engine::finish_interrupted(*env.session))
        if (!out.json()) out.err(note);
    auto rec = engine::recorded_recipes(*env.session, o->ids, o->all);
    if (!out.json())
      for (auto& why : rec.left_out) out.err("left out " + why);
    if (rec.recipes.empty()) {
      if (out.json()) {
        engine::ApplyResult none;
        auto j = plan_json(none.plan);
        j["written"] = false;
        j["dry_run"] = o->dry_run;
        j["commit"] = nullptr;
        j["pyc_removed"] = nlohmann::json::array();
        j["recovered"] = nlohmann::json::array();
        j["recovered_files"] = nlohmann::json::array();
        j["left_out"] = rec.left_out;
        out.document(j);
      } else {
        out.err(rec.left_out.empty() ? "nothing to reapply: every patch is applied"
                                     : "nothing reapplied");
      }
      return int(Exit::ok);
    }
    ApplyOptions opts = *o;
    // A patch kept with a shared folder's owner was applied with --system: that consent
    // is in the history, and reapplying it goes back to the same place. One apply writes
    // one history: patches of both kinds go back in two commands.
    if (!rec.shared.empty() && rec.shared.size() != rec.recipes.size()) {
      std::vector<std::string> own;
      for (auto& r : rec.recipes)
        if (std::find(rec.shared.begin(), rec.shared.end(), r.id) == rec.shared.end()) own.push_back(r.id);
      throw Error("these patches keep their histories in two places; reapply them apart: " +
                  env.session->invocation + " reapply " + util::join(own, " ") + ", then " +
                  env.session->invocation + " reapply " + util::join(rec.shared, " "));
    }
    opts.system = opts.system || !rec.shared.empty();
    env.session->reapply = true;  // the history's entries read "reapply", as the user typed
    return apply_recipes(g, env, std::move(rec.recipes), opts, &rec.left_out);
  };
}

}  // namespace sitepatch::cli
