// sitepatch rollback ID... | --all: originals back; other recipes' edits stay.
#include "commands.hpp"
#include "sitepatch/util/interrupt.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {

Runner register_rollback(CLI::App& app, const GlobalOptions& g) {
  struct Opts {
    std::vector<std::string> ids;
    bool all = false;
    bool dry_run = false;
    bool missing_ok = false;
  };
  auto o = std::make_shared<Opts>();
  app.add_option("ids", o->ids, "Patch ids to roll back");
  app.add_flag("--all", o->all, "Roll back every applied patch");
  app.add_flag("-n,--dry-run", o->dry_run, "Print the diff rollback would make; write nothing");
  app.add_flag("--missing-ok", o->missing_ok, "Skip ids that are not applied instead of failing (as `rm -f` does), so running it again changes nothing");
  return [&g, o] {
    if (o->all && !o->ids.empty())
      throw Error("rollback: give patch ids or --all, not both", Exit::usage);
    if (!o->all && o->ids.empty())
      throw Error("rollback: name the patches to roll back (see 'sitepatch list'), or --all", Exit::usage);
    if (o->all && o->missing_ok)
      throw Error("rollback: --missing-ok goes with patch ids; --all never misses one", Exit::usage);
    Env env = open_env(g);
    env.session->missing_ok = o->missing_ok;
    Output out(g);
    say_environment(out, env);
    auto r = engine::rollback(*env.session, o->ids, o->all, o->dry_run);
    if (out.json()) {
      nlohmann::json files = nlohmann::json::array();
      for (auto& f : r.files) files.push_back({{"path", f.rel}, {"diff", f.diff}});
      out.document({{"ok", true},
                    {"ids", r.ids},
                    {"files", files},
                    {"notes", r.notes},
                    {"written", r.written},
                    {"dry_run", o->dry_run},
                    {"commit", or_null(r.commit)},
                    {"pyc_removed", r.pyc_removed}});
      return util::interrupted() ? 128 + util::interrupted() : int(Exit::ok);
    }
    if (!out.quiet() && !r.files.empty()) out.page();
    if (!out.quiet())
      for (auto& f : r.files) out.diff(f.diff);
    for (auto& n : r.notes) out.err(n);
    if (r.ids.empty()) out.err("nothing to roll back");
    else if (o->dry_run)
      out.err("dry run: rolling back " + util::join(r.ids, ", ") + " would restore " +
              std::to_string(r.files.size()) + " file(s); nothing was written");
    else
      out.err("rolled back " + util::join(r.ids, ", ") + ": " + std::to_string(r.files.size()) +
              " file(s) restored, " + std::to_string(r.pyc_removed.size()) + " .pyc removed");
    if (int sig = util::interrupted()) {
      out.err(std::string("sitepatch: interrupted by ") + util::signal_name(sig) +
              "; the rollback had begun writing, so it finished first");
      return 128 + sig;
    }
    return int(Exit::ok);
  };
}

}  // namespace sitepatch::cli
