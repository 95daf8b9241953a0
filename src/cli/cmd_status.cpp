// sitepatch status: the one screen to read after `pip install -U`: which patches an
// upgrade (or anyone) took away, and the command that puts them back.
#include <filesystem>

#include <fmt/format.h>

#include "commands.hpp"
#include "sitepatch/util/file.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/strings.hpp"
#include "status_json.hpp"

namespace sitepatch::cli {
namespace {

std::string_view advice_name(engine::Advice a) {
  switch (a) {
    case engine::Advice::none: return "ok";
    case engine::Advice::reapply: return "needs reapplying";
    case engine::Advice::review: return "changed by others";
    case engine::Advice::drop: return "distribution uninstalled";
  }
  return "?";
}

// How to put a patch back: reapply, from the copy of the recipe the history keeps
// (the file may be gone, or changed since; a changed one is the user's to plan).
std::string reapply_command(const std::map<std::string, std::string>& blockers, const std::string& cmd,
                            const engine::PatchStatus& p, std::string& note) {
  // Only a command that will work: where reapply would refuse or skip, --force, and why.
  if (auto it = blockers.find(p.id); it != blockers.end()) {
    note = it->second;
    return cmd + " reapply --force " + p.id;
  }
  std::error_code ec;
  if (!p.recipe_path.empty() && std::filesystem::is_regular_file(p.recipe_path, ec)) {
    auto text = util::read_file(p.recipe_path);
    if (text && util::sha256_hex(*text) != p.recipe_hash)
      note = p.recipe_path + " changed since it was applied: this puts the applied copy back; plan the file to take the change";
  }
  return cmd + " reapply " + p.id;
}

// What status prints and documents, built patch by patch.
struct Report {
  nlohmann::json patches = nlohmann::json::array();
  std::vector<std::string> lines, fixes;
  std::vector<size_t> plain_reapply;  // fixes that are a plain `reapply ID`
  size_t needing = 0, width = 2;
  bool intact = true;
};

// An apply a killed sitepatch left unfinished: settled first, whatever else the files say
// follows from it.
void add_unfinished(Report& r, const Output& o, const engine::PatchStatus& s, const std::string& cmd) {
  ++r.needing;
  r.intact = false;
  bool writing = s.unfinished == "writing";
  std::string command = cmd + (writing ? " reapply " : " rollback ") + s.id;
  std::string note = writing ? "finishes the interrupted apply; " + cmd + " rollback " + s.id + " undoes it instead"
                             : "its check never passed; apply it again to check it again";
  std::string advice = writing ? "interrupted while writing" : "check never passed";
  auto j = status_json(s);
  j["advice"] = advice;
  j["command"] = command;
  j["note"] = note;
  r.patches.push_back(j);
  r.lines.push_back(fmt::format("  {:<{}}  ", s.id, r.width) + o.paint(advice, Paint::bad));
  r.lines.push_back(std::string(r.width + 4, ' ') + s.unfinished_message);
  r.fixes.push_back("  " + command + "    # " + note);
}

// A patch whose last apply finished: its advice, the command that acts on it, its lines.
void add_patch(Report& r, const Output& o, const engine::PatchStatus& s, const std::string& cmd,
               const std::map<std::string, std::string>& blockers) {
  engine::Advice a = engine::advice_for(s);
  std::string command, note, broken;
  for (auto& f : s.files)
    if (!f.broken.empty()) broken = f.rel + " " + f.broken;
  r.intact = r.intact && s.state == engine::FileState::applied && broken.empty();
  if (a == engine::Advice::reapply) command = reapply_command(blockers, cmd, s, note);
  if (a == engine::Advice::drop) command = cmd + " rollback " + s.id;
  if (a == engine::Advice::review) {
    // Their change may be a hotfix to keep, or a mistake to undo: look before adopting.
    command = cmd + " adopt " + s.id;
    note = "see their change first: " + cmd + " adopt --dry-run " + s.id;
  }
  // In place, and still not what runs (a compiled twin, a NameError): the way out is
  // the rollback; verify says more.
  if (a == engine::Advice::none && !broken.empty()) {
    command = cmd + " rollback " + s.id;
    note = "it does not run as it is; " + cmd + " verify " + s.id + " says why";
  }
  if (a != engine::Advice::none || !broken.empty()) ++r.needing;
  auto j = status_json(s);
  j["advice"] = advice_name(a);
  j["command"] = or_null(command);
  j["note"] = or_null(note);
  r.patches.push_back(j);

  Paint paint = a == engine::Advice::none ? Paint::ok : a == engine::Advice::review ? Paint::warn : Paint::bad;
  if (a == engine::Advice::none && !broken.empty()) paint = Paint::bad;
  r.lines.push_back(fmt::format("  {:<{}}  ", s.id, r.width) +
                    o.paint(a != engine::Advice::none ? std::string(advice_name(a))
                            : broken.empty()          ? "applied"
                                                      : "broken",
                            paint));
  for (auto& f : s.files)
    if (f.state != engine::FileState::applied) r.lines.push_back(std::string(r.width + 4, ' ') + f.message);
    else if (!f.broken.empty()) r.lines.push_back(std::string(r.width + 4, ' ') + f.rel + ": " + f.broken);
  if (a == engine::Advice::reapply && note.empty()) r.plain_reapply.push_back(r.fixes.size());
  if (!command.empty()) r.fixes.push_back("  " + command + (note.empty() ? "" : "    # " + note));
}

// Several patches an upgrade took away: one command puts them all back (not when one
// of them needs --force: reapply --all would stop at it).
void fold_reapplies(Report& r, const std::string& cmd, const std::map<std::string, std::string>& blockers) {
  if (r.plain_reapply.size() < 2 || !blockers.empty()) return;
  for (auto k = r.plain_reapply.rbegin(); k != r.plain_reapply.rend(); ++k) r.fixes.erase(r.fixes.begin() + long(*k));
  r.fixes.insert(r.fixes.begin() + long(r.plain_reapply.front()),
                 "  " + cmd + " reapply --all    # puts back the " + std::to_string(r.plain_reapply.size()) +
                     " patches above that need reapplying");
}

}  // namespace

Runner register_status(CLI::App&, const GlobalOptions& g) {
  return [&g] {
    Env env = open_env(g);
    Output o(g);
    auto statuses = engine::verify(*env.session, {});
    std::vector<engine::PatchStatus> to_reapply;
    for (auto& st : statuses)
      if (engine::advice_for(st) == engine::Advice::reapply) to_reapply.push_back(st);
    auto blockers = engine::reapply_blockers(*env.session, to_reapply);
    std::string cmd = env.session->invocation;
    Report r;
    for (auto& s : statuses) r.width = std::max(r.width, s.id.size());
    for (auto& s : statuses)
      if (!s.unfinished.empty()) add_unfinished(r, o, s, cmd);
      else add_patch(r, o, s, cmd, blockers);
    fold_reapplies(r, cmd, blockers);
    int code = int(r.intact ? Exit::ok : Exit::not_intact);
    if (o.json()) {
      o.document({{"ok", r.intact}, {"environment", env.session->env.prefix}, {"patches", r.patches}});
      return code;
    }
    const auto& e = env.session->env;
    std::string where = (g.host.empty() ? "" : g.host + ":") + e.prefix + " (Python " + e.version + ")";
    if (statuses.empty()) {
      o.out(where + ": no patches applied");
      return int(Exit::ok);
    }
    o.out(where + ": " + std::to_string(statuses.size()) + " patch(es), " +
          (r.needing ? std::to_string(r.needing) + " need(s) attention" : "all applied"));
    for (auto& l : r.lines) o.out(l);
    if (!r.fixes.empty()) {
      o.out("");
      o.out("to fix:");
      for (auto& t : r.fixes) o.out(t);
    }
    return code;
  };
}

}  // namespace sitepatch::cli
