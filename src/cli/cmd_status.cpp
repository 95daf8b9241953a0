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
    bool intact = true;
    nlohmann::json arr = nlohmann::json::array();
    std::vector<std::string> lines, fixes;
    size_t w = 2, needing = 0;
    std::vector<size_t> plain_reapply;  // fixes that are a plain `reapply ID`
    for (auto& s : statuses) w = std::max(w, s.id.size());
    for (auto& s : statuses) {
      intact = intact && s.state == engine::FileState::applied && s.unfinished.empty();
      engine::Advice a = engine::advice_for(s);
      std::string command, note, broken;
      for (auto& f : s.files)
        if (!f.broken.empty()) broken = f.rel + " " + f.broken;
      intact = intact && broken.empty();
      if (!s.unfinished.empty()) {
        // Settled first: whatever else the files say follows from the unfinished apply.
        ++needing;
        bool writing = s.unfinished == "writing";
        command = cmd + (writing ? " reapply " : " rollback ") + s.id;
        note = writing ? "finishes the interrupted apply; " + cmd + " rollback " + s.id + " undoes it instead"
                       : "its check never passed; apply it again to check it again";
        auto j = status_json(s);
        j["advice"] = writing ? "interrupted while writing" : "check never passed";
        j["command"] = command;
        j["note"] = note;
        arr.push_back(j);
        lines.push_back(fmt::format("  {:<{}}  ", s.id, w) +
                        o.paint(writing ? "interrupted while writing" : "check never passed", Paint::bad));
        lines.push_back(std::string(w + 4, ' ') + s.unfinished_message);
        fixes.push_back("  " + command + "    # " + note);
        continue;
      }
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
      if (a != engine::Advice::none || !broken.empty()) ++needing;
      auto j = status_json(s);
      j["advice"] = advice_name(a);
      j["command"] = or_null(command);
      j["note"] = or_null(note);
      arr.push_back(j);

      Paint paint = a == engine::Advice::none ? Paint::ok : a == engine::Advice::review ? Paint::warn : Paint::bad;
      std::string head = fmt::format("  {:<{}}  ", s.id, w);
      if (a == engine::Advice::none && !broken.empty()) paint = Paint::bad;
      lines.push_back(head + o.paint(a != engine::Advice::none ? std::string(advice_name(a))
                                     : broken.empty()          ? "applied"
                                                               : "broken",
                                     paint));
      for (auto& f : s.files)
        if (f.state != engine::FileState::applied) lines.push_back(std::string(w + 4, ' ') + f.message);
        else if (!f.broken.empty()) lines.push_back(std::string(w + 4, ' ') + f.rel + ": " + f.broken);
      if (a == engine::Advice::reapply && note.empty()) plain_reapply.push_back(fixes.size());
      if (!command.empty()) fixes.push_back("  " + command + (note.empty() ? "" : "    # " + note));
    }
    // Several patches an upgrade took away: one command puts them all back (not when one
    // of them needs --force: reapply --all would stop at it).
    if (plain_reapply.size() > 1 && blockers.empty()) {
      for (auto k = plain_reapply.rbegin(); k != plain_reapply.rend(); ++k) fixes.erase(fixes.begin() + long(*k));
      fixes.insert(fixes.begin() + long(plain_reapply.front()),
                   "  " + cmd + " reapply --all    # puts back the " + std::to_string(plain_reapply.size()) +
                       " patches above that need reapplying");
    }
    if (o.json()) {
      o.document({{"ok", intact}, {"environment", env.session->env.prefix}, {"patches", arr}});
      return int(intact ? Exit::ok : Exit::not_intact);
    }
    const auto& e = env.session->env;
    std::string where = (g.host.empty() ? "" : g.host + ":") + e.prefix + " (Python " + e.version + ")";
    if (statuses.empty()) {
      o.out(where + ": no patches applied");
      return int(Exit::ok);
    }
    o.out(where + ": " + std::to_string(statuses.size()) + " patch(es), " +
          (needing ? std::to_string(needing) + " need(s) attention" : "all applied"));
    for (auto& l : lines) o.out(l);
    if (!fixes.empty()) {
      o.out("");
      o.out("to fix:");
      for (auto& t : fixes) o.out(t);
    }
    return int(intact ? Exit::ok : Exit::not_intact);
  };
}

}  // namespace sitepatch::cli
