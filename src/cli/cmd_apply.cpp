// sitepatch apply RECIPE...: plan, then write all of it or none of it.
#include <algorithm>

#include <iostream>
#include <optional>

#include "commands.hpp"
#include "sitepatch/engine/try.hpp"
#include "sitepatch/util/interrupt.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {

namespace {

// apply --check / --check-with, after the write and under the same lock: a failed or
// interrupted check rolls this apply back (the history keeps both) and is the answer.
struct Checked {
  engine::CheckResult check;
  std::vector<std::string> undone;  // the ids rolled back when it failed
  int signal = 0;                   // what stopped it, 0 when nothing did
};

nlohmann::json check_json(const engine::CheckResult& c) {
  return {{"what", c.what}, {"ok", c.ok}, {"status", c.run.status}, {"stdout", c.run.out}, {"stderr", c.run.err}};
}

// The check's output and verdict, on stderr (its stdout too: the plan is stdout's).
int report_check(const Output& out, const Checked& c) {
  if (c.signal) {
    out.err(std::string("sitepatch: interrupted by ") + util::signal_name(c.signal) + " while " + c.check.what +
            " ran; rolled back " + util::join(c.undone, ", ") + ": a check that never passed keeps nothing");
    return 128 + c.signal;
  }
  if (c.check.ok) {
    if (!out.quiet()) out.err("check passed: " + c.check.what);
    return int(Exit::ok);
  }
  // Escaped: over ssh it is the far side's text, and either way a file's bytes printed
  // by the check must not steer this terminal.
  for (const std::string* text : {&c.check.run.out, &c.check.run.err})
    if (!text->empty()) std::cerr << util::printable_lines(*text) << (text->back() == '\n' ? "" : "\n");
  out.err("sitepatch: check failed: " + c.check.what + " exited " + std::to_string(c.check.run.status) +
          "; rolled back " + util::join(c.undone, ", ") + " (the history keeps the apply and its rollback)");
  return int(Exit::failed);
}

// The line that ends a human apply: what was written, skipped or already there.
void print_outcome(const Output& out, const engine::ApplyResult& r, bool dry_run, const std::string& state_dir) {
  const auto& p = r.plan;
  std::vector<std::string> ids, skipped, fixed, shipped;
  for (auto& rec : p.recipes) {
    bool skip = std::any_of(p.edits.begin(), p.edits.end(), [&](auto& e) {
      return e.recipe_id == rec.id && e.state == engine::EditState::skipped;
    });
    bool came = std::count(p.shipped.begin(), p.shipped.end(), rec.id) > 0;
    bool upstream = std::count(p.forget.begin(), p.forget.end(), rec.id) > 0;
    (skip ? skipped : came ? shipped : upstream ? fixed : ids).push_back(rec.id);
  }
  std::vector<std::string> why;
  if (!shipped.empty()) why.push_back(util::join(shipped, ", ") + " shipped patched with the installed version");
  if (!skipped.empty()) why.push_back(util::join(skipped, ", ") + " skipped");
  if (!fixed.empty()) why.push_back(util::join(fixed, ", ") + " already in the installed version");
  if (!r.written && !dry_run && ids.empty())
    out.err("nothing written: " + util::join(why, "; "));
  else if (dry_run)
    out.err("dry run: " + std::to_string(p.files.size()) + " file(s) would change; nothing was written");
  else if (!r.written)
    out.err("nothing to do: " + util::join(ids, ", ") + " already applied");
  else
    out.err("applied " + util::join(ids, ", ") + ": " + std::to_string(p.files.size()) +
            " file(s) changed, " + std::to_string(r.pyc_removed.size()) +
            " .pyc removed; history in " + state_dir);
}

}  // namespace

void add_apply_options(CLI::App& app, ApplyOptions& o) {
  app.add_flag("-n,--dry-run", o.dry_run, "Print what would change, and refuse what apply would refuse (same exit); write nothing");
  app.add_flag("--force", o.force, "Apply even when the installed version does not match `requires:`, when the recipe says `on-upgrade: warn|fail` after an upgrade, or when new code uses names the module never binds");
  app.add_flag("--system", o.system, "Also write into folders this environment shares but does not own (the system's or a base interpreter's site-packages, a .pth folder; the history goes with the folder's owner), and files a Debian package or an EXTERNALLY-MANAGED Python owns");
  app.add_flag("--check", o.check, "After writing, import every patched module in a fresh process of the environment's Python; if one fails, roll the apply back and exit 1 with its output");
  app.add_option("--check-with", o.check_with, "After writing, run CMD (sh -c, the environment's bin first on PATH): a smoke test, a warm-up; if it fails, roll the apply back and exit 1 with its output")
      ->type_name("CMD");
}

int apply_recipes(const GlobalOptions& g, Env& env, std::vector<recipe::Recipe> loaded, const ApplyOptions& o,
                  const std::vector<std::string>* left_out) {
  env.session->force = o.force;
  env.session->system = o.system;
  Output out(g);
  say_environment(out, env);
  std::optional<Checked> checked;
  engine::AfterWrite check;
  // Noted, not fatal, from the apply's start: a signal during the write lets the write
  // finish whole, then stops the check at once, and the apply is rolled back.
  std::optional<util::InterruptGuard> guard;
  if (!o.dry_run && (o.check || !o.check_with.empty())) {
    guard.emplace();
    check = [&](const engine::Plan& p) {
      checked = Checked{};
      if (!util::interrupted()) checked->check = engine::check_applied(*env.session, p, o.check_with);
      else checked->check.what = o.check_with.empty() ? "importing the patched modules" : "`" + o.check_with + "`";
      checked->signal = util::interrupted();
      if (checked->signal) checked->check.ok = false;
      return checked->check.ok;
    };
  }
  auto r = engine::apply(*env.session, std::move(loaded), o.dry_run, check);
  guard.reset();
  const auto& p = r.plan;
  if (checked && !r.kept) checked->undone = r.undone.ids;
  if (out.json()) {
    auto j = plan_json(p);
    if (checked) {
      j["check"] = check_json(checked->check);
      j["check"]["interrupted_by"] = checked->signal ? nlohmann::json(util::signal_name(checked->signal)) : nullptr;
      j["rolled_back"] = !checked->check.ok;
      j["ok"] = checked->check.ok && j["ok"].get<bool>();
    }
    j["written"] = r.written;
    j["dry_run"] = o.dry_run;
    j["commit"] = or_null(r.commit);
    j["pyc_removed"] = r.pyc_removed;
    j["recovered"] = r.recovered;
    j["recovered_files"] = r.recovered_files;
    if (left_out) j["left_out"] = *left_out;
    out.document(j);
  } else {
    for (auto& note : r.recovered) out.err(note);
    print_plan(out, p, true);
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
  if (checked && out.json())
    return checked->signal ? 128 + checked->signal : checked->check.ok ? int(Exit::ok) : int(Exit::failed);
  if (checked)
    if (int code = report_check(out, *checked); code != int(Exit::ok)) return code;
  int sig = checked ? 0 : util::interrupted();
  if (out.json()) return sig ? 128 + sig : int(Exit::ok);
  print_outcome(out, r, o.dry_run, env.session->state_dir);
  if (sig) {
    out.err(std::string("sitepatch: interrupted by ") + util::signal_name(sig) +
            "; the apply had begun writing, so it finished first (sitepatch rollback undoes it)");
    return 128 + sig;
  }
  return int(Exit::ok);
}

Runner register_apply(CLI::App& app, const GlobalOptions& g) {
  struct Opts : ApplyOptions {
    std::vector<std::string> recipes;
  };
  auto o = std::make_shared<Opts>();
  app.add_option("recipes", o->recipes, "Recipe files (YAML), folders of them (*.yaml in name order), or - for standard input")->required();
  add_apply_options(app, *o);
  return [&g, o] {
    auto loaded = load_recipes(o->recipes);
    Env env = open_env(g);
    return apply_recipes(g, env, std::move(loaded), *o);
  };
}

}  // namespace sitepatch::cli
