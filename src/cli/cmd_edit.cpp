// sitepatch edit DIST: before editing a distribution by hand, pip's bytes go into the
// history (nothing else changes), so `capture` later needs no wheel; --copy DIR puts
// its sources in a folder to edit instead.
#include "commands.hpp"
#include "sitepatch/engine/capture.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {

Runner register_edit(CLI::App& app, const GlobalOptions& g) {
  struct Opts {
    std::string dist, copy;
    bool dry_run = false;
  };
  auto o = std::make_shared<Opts>();
  app.add_option("distribution", o->dist, "The installed distribution you are about to edit")->required();
  app.add_option("--copy", o->copy, "Also copy its Python sources to DIR (on this machine) to edit there; "
                                    "then `capture DIST --from DIR`")
      ->type_name("DIR");
  app.add_flag("-n,--dry-run", o->dry_run, "Check its files are pip's and say what would be saved; save nothing");
  return [&g, o] {
    Env env = open_env(g);
    Output out(g);
    auto r = engine::save_pristine(*env.session, o->dist, o->copy, o->dry_run);
    std::string cmd = env.session->invocation;
    std::string next = cmd + " capture " + r.dist + (r.copy.empty() ? "" : " --from " + util::shell_word(r.copy));
    if (out.json()) {
      out.document({{"ok", true}, {"distribution", r.dist}, {"version", r.version}, {"folders", r.folders},
                    {"files", r.files}, {"commit", or_null(r.commit)}, {"copy", or_null(r.copy)},
                    {"copied", r.copied}, {"dry_run", o->dry_run}, {"next", next}});
      return int(Exit::ok);
    }
    for (auto& note : r.notes) out.err(note);
    if (o->dry_run) {
      out.err("dry run: " + std::to_string(r.files) + " Python file(s) of " + r.dist + " " + r.version +
              " are pip's and would be saved; nothing was saved");
      return int(Exit::ok);
    }
    out.err("saved pip's bytes of " + std::to_string(r.files) + " Python file(s) of " + r.dist + " " + r.version +
            " in the history (" + r.commit.substr(0, 10) + ")");
    if (!r.copy.empty()) {
      out.err("copied them to " + r.copy + "; edit them there");
    } else {
      out.err("edit them in place:");
      for (auto& f : r.folders) out.out("  " + f);
    }
    out.err("then: " + next);
    return int(Exit::ok);
  };
}

}  // namespace sitepatch::cli
