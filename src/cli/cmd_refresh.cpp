// sitepatch refresh ID [-o FILE]: a hand change on top of an applied patch becomes its
// recipe's new edits (quilt's refresh), written to FILE or to the recipe file the
// history names when it is yours, and recorded as the patch's new version.
#include <sys/stat.h>
#include <filesystem>
#include <unistd.h>

#include "commands.hpp"
#include "output_file.hpp"
#include "sitepatch/engine/refresh.hpp"
#include "sitepatch/store/history.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {

namespace {

struct RefreshOptions {
  std::string id;
  std::string output;
  bool dry_run = false;
};

// Where the refreshed recipe goes: -o, else the file the history names when it is a
// plain file here that the caller owns; "" when neither.
std::string target_of(const RefreshOptions& o, const std::string& named) {
  if (!o.output.empty()) return o.output;
  struct stat st{};
  if (named.empty() || named[0] != '/' || ::lstat(named.c_str(), &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_uid != ::geteuid())
    return "";
  return named;
}

nlohmann::json refresh_json(const engine::RefreshResult& r, const RefreshOptions& o, const std::string& file) {
  nlohmann::json files = nlohmann::json::array();
  for (auto& f : r.files) {
    nlohmann::json outside = nlohmann::json::array();
    for (auto& c : f.outside) outside.push_back({{"first", c.new_first}, {"last", c.new_last}});
    files.push_back({{"path", f.rel}, {"edits", f.edits}, {"whole", f.whole}, {"outside", outside}});
  }
  return {{"ok", true},
          {"id", r.id},
          {"recipe", or_null(r.new_recipe)},
          {"recipe_diff", r.new_recipe.empty() ? "" : store::unified_diff(r.old_recipe, r.new_recipe, "recipe.yaml")},
          {"recipe_file", or_null(file)},
          {"files", files},
          {"written", r.written},
          {"dry_run", o.dry_run},
          {"commit", or_null(r.commit)}};
}

}  // namespace

Runner register_refresh(CLI::App& app, const GlobalOptions& g) {
  auto o = std::make_shared<RefreshOptions>();
  app.add_option("id", o->id, "The applied patch whose files, as they are now, become its recipe")->required();
  app.add_option("-o,--output", o->output,
                 "Where to write the refreshed recipe (default: the recipe file the history names, when it is a "
                 "file here that you own; - for stdout)")
      ->type_name("FILE");
  app.add_flag("-n,--dry-run", o->dry_run, "Print the recipe's diff; write and record nothing");
  app.footer(
      "The edits are capture's, from pip's bytes to the files as they are now, as small as they can be;\n"
      "the recipe's id, description, requires: and comments stay as written. The history records the new\n"
      "recipe and the files as the patch's applied state (rollback still restores pip's bytes), and\n"
      "pip's RECORD rows follow them. Refused when an upgrade took the patch's edits away (reapply it\n"
      "first) or another patch changes the same files.");
  return [&g, o] {
    Env env = open_env(g);
    Output out(g);
    // Where it goes is settled (and checked) under the lock, before anything is recorded.
    std::string file;
    auto target = [&](const engine::RefreshResult& checked) {
      file = target_of(*o, checked.recipe_path);
      if (file.empty())
        throw Error("refresh " + o->id + ": the history names no recipe file here that you own" +
                        (checked.recipe_path.empty() ? "" : " (" + util::printable(checked.recipe_path) + ")") +
                        ": give -o FILE (or -o - for stdout); nothing was written",
                    Exit::usage);
      check_output_file(file, "-o", "recipe");
      return file == "-" ? std::string() : std::filesystem::absolute(file).lexically_normal().string();
    };
    auto r = engine::refresh(*env.session, o->id, o->dry_run, target);
    if (r.written && file != "-") {
      try {
        write_output_file(file, r.new_recipe, "-o", "recipe", true);
      } catch (const Error& e) {
        throw Error(std::string(e.what()) + "\nthe refreshed recipe of " + r.id + " is recorded; its text is in the "
                        "history: " + env.session->invocation + " show --recipe " + r.id,
                    Exit::partial);
      }
    }
    if (out.json()) {
      out.document(refresh_json(r, *o, r.written && file != "-" ? file : ""));
      return int(Exit::ok);
    }
    if (r.new_recipe.empty()) {
      out.err("nothing to refresh: " + r.id + "'s files are as its recipe leaves them");
      return int(Exit::ok);
    }
    if (file == "-") out.out(r.new_recipe);
    else {
      std::string diff = store::unified_diff(r.old_recipe, r.new_recipe, "recipe.yaml");
      if (util::ends_with(diff, "\n")) diff.pop_back();
      out.out(diff);
    }
    for (auto& f : r.files)
      for (auto& c : f.outside)
        out.err("left out of the recipe: " + f.rel + " lines " + std::to_string(c.new_first) + "-" +
                std::to_string(c.new_last) + " (outside any definition; the recorded file keeps them)");
    if (o->dry_run)
      out.err("dry run: " + r.id + "'s recipe would change as above; nothing was written");
    else
      out.err("refreshed " + r.id + ": " + std::to_string(r.files.size()) + " file(s) captured" +
              (file == "-" ? "" : ", recipe written to " + file) + "; history in " + env.session->state_dir);
    return int(Exit::ok);
  };
}

}  // namespace sitepatch::cli
