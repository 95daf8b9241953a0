// How a plan reads: the diff on stdout (so `plan > fix.diff` is a clean patch),
// one line per edit on stderr.
#include <algorithm>

#include "commands.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {

void print_plan(const Output& o, const engine::Plan& p, bool preview) {
  // Before the notes, so they keep their place above the diff in the pager.
  // A plan that fails shows no diff: apply writes all of it or none, so none would be made.
  bool diffs = !o.quiet() && p.ok();
  if (diffs && !p.files.empty()) o.page();
  for (const auto& note : p.notes) {
    // A recipe the installed distribution came patched with is no upgrade's news.
    bool shipped = std::any_of(p.shipped.begin(), p.shipped.end(),
                               [&](auto& id) { return util::starts_with(note, id + ": shipped patched"); });
    o.err(shipped ? o.paint("shipped", Paint::ok) + "  " + note : o.paint("upgrade", Paint::warn) + "  " + note);
  }
  for (const auto& note : p.placement) o.err(o.paint("where", Paint::warn) + "  " + note);
  if (diffs)
    for (const auto& f : p.files) o.diff(f.diff);
  for (const auto& e : p.edits) {
    bool as_planned = e.state == engine::EditState::will_apply || e.state == engine::EditState::already_applied;
    if (preview && o.quiet() && as_planned && e.warning.empty() && e.upstream.empty()) continue;
    Paint paint = e.state == engine::EditState::failed        ? Paint::bad
                  : e.state == engine::EditState::will_apply ? Paint::ok
                  : e.state == engine::EditState::skipped    ? Paint::warn
                                                              : Paint::dim;
    std::string where;
    if (!e.file.empty())
      where = "  (" + e.file + (e.line ? ":" + std::to_string(e.line) : "") +
              (e.state == engine::EditState::will_apply && !e.message.empty() ? ", " + e.message : "") + ")";
    // A recipe its `requires:` leaves out: each edit says skipped, and the reason is said
    // once, on the recipe's own line below.
    bool recipe_level = e.state == engine::EditState::failed && util::starts_with(e.message, "skipped: ") &&
                        std::find(p.problems.begin(), p.problems.end(), e.message.substr(9)) != p.problems.end();
    std::string state = recipe_level ? "skipped" : std::string(engine::state_name(e.state));
    std::string line = o.paint(state, recipe_level ? Paint::warn : paint) + "  " + e.recipe_id + "  " + e.where +
                       "  " + e.action + where;
    if (e.state == engine::EditState::failed && !recipe_level)
      line = e.recipe_path + ":" + std::to_string(e.recipe_line) + ":" +
             std::to_string(e.recipe_column) + ": " + line + ": " + e.message;
    o.err(line);
    if (!e.followed.empty()) o.err("    " + e.followed);
    if (!e.warning.empty() && e.state != engine::EditState::failed)
      o.err("    " + o.paint("warning", Paint::warn) + ": " + e.warning);
    if (!e.upstream.empty()) {
      o.err("    " + o.paint(e.upstream, Paint::warn));
      if (!o.quiet())
        for (const auto& l : util::split(e.upstream_diff, '\n'))
          if (!l.empty()) o.err("      " + l);
    }
  }
  for (const auto& problem : p.problems) o.err(o.paint("fails", Paint::bad) + "  " + problem);
}

nlohmann::json plan_json(const engine::Plan& p) {
  nlohmann::json edits = nlohmann::json::array(), files = nlohmann::json::array();
  for (const auto& e : p.edits)
    edits.push_back({{"recipe", e.recipe_id},
                     {"target", e.where},
                     {"action", e.action},
                     {"file", or_null(e.file)},
                     {"line", or_null(e.line)},
                     {"state", engine::state_name(e.state)},
                     {"message", or_null(e.message)},
                     {"recipe_file", e.recipe_path},
                     {"recipe_line", or_null(e.recipe_line)},
                     {"recipe_column", or_null(e.recipe_column)},
                     {"module", or_null(e.module)},
                     {"followed", or_null(e.followed)},
                     {"upstream_changed", or_null(e.upstream)},
                     {"upstream_diff", or_null(e.upstream_diff)},
                     {"unbound", e.unbound},
                     {"warning", or_null(e.warning)}});
  for (const auto& f : p.files)
    files.push_back({{"path", f.rel},
                     {"site_dir", f.site_dir},
                     {"distribution", or_null(f.dist)},
                     {"version", or_null(f.version)},
                     {"debian_package", or_null(f.debian_package)},
                     {"diff", f.diff}});
  return {{"ok", p.ok()}, {"edits", edits}, {"files", files}, {"problems", p.problems}, {"notes", p.notes}, {"placement", p.placement}, {"shipped", p.shipped}};
}

}  // namespace sitepatch::cli
