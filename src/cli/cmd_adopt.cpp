// sitepatch adopt ID: after someone changed a patched file around its edits, record the
// files as they are now as the patch's applied state (status and verify green again;
// rollback still restores pip's originals).
#include "commands.hpp"

namespace sitepatch::cli {

Runner register_adopt(CLI::App& app, const GlobalOptions& g) {
  struct Opts {
    std::string id;
    bool dry_run = false;
  };
  auto o = std::make_shared<Opts>();
  app.add_option("id", o->id, "The applied patch whose files were changed by others")->required();
  app.add_flag("-n,--dry-run", o->dry_run, "Print the changes adopt would record (theirs, as a diff); write nothing");
  return [&g, o] {
    Env env = open_env(g);
    Output out(g);
    say_environment(out, env);
    auto r = engine::adopt(*env.session, o->id, o->dry_run);
    if (out.json()) {
      nlohmann::json files = nlohmann::json::array();
      for (auto& f : r.files) files.push_back({{"path", f.rel}, {"diff", f.diff}});
      out.document({{"ok", true},
                    {"id", r.id},
                    {"files", files},
                    {"notes", r.notes},
                    {"written", r.written},
                    {"dry_run", o->dry_run},
                    {"commit", or_null(r.commit)}});
      return int(Exit::ok);
    }
    if (!out.quiet() && !r.files.empty()) {
      out.page();
      for (auto& f : r.files) out.diff(f.diff);
    }
    for (auto& n : r.notes) out.err(n);
    std::string n = std::to_string(r.files.size()) + " file(s)";
    if (r.files.empty())
      out.err("nothing to adopt: " + r.id + "'s files are as sitepatch left them");
    else if (o->dry_run)
      out.err("dry run: adopting " + r.id + " would record " + n + " as they are now; nothing was written");
    else
      out.err("adopted " + r.id + ": " + n + " recorded as they are now; rollback still restores pip's originals");
    return int(Exit::ok);
  };
}

}  // namespace sitepatch::cli
