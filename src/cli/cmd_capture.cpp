// sitepatch capture DIST: hand edits of a distribution become a recipe of named edits,
// recorded as an applied patch (rollback gives pip's bytes back; apply on a fresh
// install gives the edited ones).
#include <filesystem>

#include "commands.hpp"
#include "output_file.hpp"
#include "sitepatch/engine/capture.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {
namespace {

struct Opts {
  std::string dist, id, output, original, from;
  bool hash_all = false;
  bool whole_file = false;
  bool system = false;
  bool dry_run = false;
};

std::string where(const python::OutsideChange& c) {
  if (c.new_first) return "lines " + std::to_string(c.new_first) + "-" + std::to_string(c.new_last);
  return "lines " + std::to_string(c.old_first) + "-" + std::to_string(c.old_last) + " of pip's (removed)";
}

nlohmann::json capture_json(const engine::CaptureResult& r, const Opts& o, const std::string& path) {
  auto j = plan_json(r.applied.plan);
  nlohmann::json files = nlohmann::json::array();
  for (auto& f : r.files) {
    nlohmann::json outside = nlohmann::json::array();
    for (auto& c : f.outside)
      outside.push_back({{"old_first", c.old_first}, {"old_last", c.old_last}, {"new_first", c.new_first},
                         {"new_last", c.new_last}, {"text", c.text}});
    nlohmann::json moved = nlohmann::json::array();
    for (auto& m : f.moved)
      moved.push_back({{"import", m.import}, {"edited_line", m.edited_line}, {"recipe_line", m.recipe_line}});
    files.push_back({{"path", f.rel}, {"original", f.original}, {"edits", f.edits}, {"outside", outside}, {"whole", f.whole},
                     {"moved_imports", moved}, {"problem", or_null(f.problem)}});
  }
  j["distribution"] = r.dist;
  j["version"] = r.version;
  j["id"] = r.id;
  j["recipe"] = or_null(r.recipe_text);
  j["recipe_path"] = or_null(path);
  j["captured"] = files;
  j["left_out"] = r.left_out;
  j["checked"] = r.checked;
  j["hashed"] = r.hashed;
  j["dry_run"] = o.dry_run;
  j["written"] = r.applied.written;
  j["commit"] = or_null(r.applied.commit);
  j["pyc_removed"] = r.applied.pyc_removed;
  return j;
}

void report(const Output& out, const engine::CaptureResult& r, const Opts& o, const std::string& path) {
  size_t edits = 0;
  for (auto& f : r.files) edits += f.edits;
  out.err("captured " + r.dist + " " + r.version + ": " + std::to_string(r.files.size()) + " file(s) edited, " +
          std::to_string(edits) + " named edit(s)" + (path.empty() ? "" : " -> " + path));
  for (auto& f : r.files)
    out.err("  " + f.rel + ": " +
            (f.whole ? std::string("taken whole (replace-module: nothing it changed is inside a definition; the "
                                   "recipe fits this version only)")
                     : std::to_string(f.edits) + " edit(s)") +
            ", pip's bytes from " + f.original);
  std::vector<std::string> left;
  for (auto& f : r.files) {
    for (auto& c : f.outside)
      left.push_back(f.rel + " " + where(c) + ": outside any definition it can name (the file keeps it; the recipe "
                     "does not make it)");
    if (!f.problem.empty()) left.push_back(f.rel + ": " + f.problem);
  }
  for (auto& f : r.files)
    for (auto& m : f.moved)
      out.err("  " + f.rel + ":" + std::to_string(m.edited_line) + ": `" + m.import +
              "` is an ensure-import: the recipe puts it after the module's imports (line " +
              std::to_string(m.recipe_line) + (m.edited_line == m.recipe_line ? ", with other blank lines" : "") +
              "); this file keeps it as you wrote it");
  left.insert(left.end(), r.left_out.begin(), r.left_out.end());
  if (!left.empty()) {
    out.err("left out:");
    for (auto& l : left) out.err("  " + l);
  }
  if (o.dry_run)
    out.err("dry run: nothing was recorded or written");
  else if (r.applied.written)
    out.err("recorded " + r.id + " as applied (" + (o.from.empty() ? "the files stay as edited" : "the copy's files written") +
            "): `sitepatch rollback " + r.id + "` gives pip's bytes back");
}

// The recipe file must not replace one the user has, nor land where another user could
// steer it (root writes it). Checked before anything is recorded; the write itself never
// replaces (AtomicFile::commit_new).
void check_output(const std::string& path) {
  if (path.empty() || path == "-") return;
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(path, ec)))
    throw Error(path + " exists; give -o another file (capture never overwrites a recipe)", Exit::usage);
  check_output_file(path, "-o", "recipe");
}

}  // namespace

Runner register_capture(CLI::App& app, const GlobalOptions& g) {
  auto o = std::make_shared<Opts>();
  app.add_option("distribution", o->dist, "The installed distribution whose files were edited (as pip names it)")->required();
  app.add_option("--id", o->id, "The recipe's id (default: <name>-local)");
  app.add_option("-o,--output", o->output, "Where to write the recipe (default: ID.yaml here; - for standard output)")
      ->type_name("FILE");
  app.add_option("--original", o->original,
                 "pip's bytes: a wheel or an unpacked tree of exactly the installed version (default: the history's "
                 "copy from `edit`, else uv's or pip's cache)")
      ->type_name("WHEEL|DIR");
  app.add_option("--from", o->from, "Read the edits from a copy (edit --copy DIR) instead of the installed files, "
                                     "and write them into the environment")
      ->type_name("DIR");
  app.add_flag("--hash-all", o->hash_all,
               "Hash every file of the distribution, not only those whose size or time differs from pip's install");
  app.add_flag("--whole-file", o->whole_file,
               "A file with a module-level change no edit can name goes into the recipe whole (replace-module) "
               "instead of leaving that change out");
  app.add_flag("--system", o->system,
               "Also capture files in folders this environment shares but does not own, or that a Debian package "
               "or an EXTERNALLY-MANAGED Python owns (as apply --system)");
  app.add_flag("-n,--dry-run", o->dry_run, "Print the diff and the recipe's edits; record and write nothing");
  return [&g, o] {
    Env env = open_env(g);
    Output out(g);
    // The default file is named after the id, as the engine makes it (normalized name).
    std::string path = o->output;
    if (path.empty() && !o->dry_run) path = (o->id.empty() ? site::normalize_name(o->dist) + "-local" : o->id) + ".yaml";
    check_output(o->dry_run ? o->output : path);  // a dry run refuses what the real run would
    engine::CaptureOptions co{o->dist, o->id, o->original, o->from, path, o->hash_all, o->whole_file, o->dry_run};
    env.session->system = o->system;
    say_environment(out, env);
    auto r = engine::capture(*env.session, co);
    if (!out.json())
      for (auto& note : r.applied.recovered) out.err(note);
    bool nothing = r.recipe_text.empty();
    if (!nothing && !o->dry_run && path != "-") {
      try {
        write_output_file(path, r.recipe_text, "-o", "recipe", false);
      } catch (const Error& e) {
        throw Error(std::string(e.what()) + "\n" + r.id + " is recorded as applied; its recipe is in the history: " +
                        env.session->invocation + " show --recipe " + r.id + " > " + r.id + ".yaml",
                    Exit::partial);
      }
    }
    if (out.json()) {
      auto j = capture_json(r, *o, nothing || o->dry_run || path == "-" ? "" : path);
      j["ok"] = !nothing || r.files.empty();
      out.document(j);
      return int(nothing && !r.files.empty() ? Exit::failed : Exit::ok);
    }
    if (r.files.empty()) {
      out.err("nothing to capture: every file of " + r.dist + " " + r.version + " is pip's (" +
              std::to_string(r.checked) + " checked, " + std::to_string(r.hashed) + " hashed" +
              (o->hash_all ? "" : "; --hash-all hashes every one") + ")");
      for (auto& l : r.left_out) out.err("  " + l);
      return int(Exit::ok);
    }
    if (path == "-" && !nothing) out.out(r.recipe_text);
    else print_plan(out, r.applied.plan, true);
    report(out, r, *o, nothing || o->dry_run || path == "-" ? "" : path);
    if (nothing) {
      out.err("sitepatch: nothing captured: no change is inside a definition a recipe can name; nothing was recorded");
      return int(Exit::failed);
    }
    return int(Exit::ok);
  };
}

}  // namespace sitepatch::cli
