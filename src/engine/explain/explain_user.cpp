// explain, last step: the user's own function that entered the library, walked when
// its file is readable where the environment is (the log usually comes from that
// machine). The library entry's walk sees only what that entry reaches; the user's
// function also reaches the calls the log does not show yet, because dynamo stopped
// at the first (fullgraph=True): the next break after the restart.
#include <algorithm>
#include <map>

#include "engine/explain/explain_impl.hpp"
#include "sitepatch/engine/audit.hpp"
#include "sitepatch/site/distribution.hpp"
#include "sitepatch/python/script_view.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine::detail {

namespace {

// The file's stem as a module name: "model" for /home/ml/serve/model.py.
std::string module_of_script(const std::string& file) {
  std::string base = file.substr(file.rfind('/') + 1);
  if (util::ends_with(base, ".py")) base.resize(base.size() - 3);
  for (auto& c : base)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) c = '_';
  if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base.insert(0, "_");
  return base;
}

// The user's frame then the library path the log shows: the chain this break is.
std::vector<std::pair<std::string, int>> logged_path(const ExplainedBreak& b, const std::string& user_name) {
  std::vector<std::pair<std::string, int>> out{{user_name, b.frames[size_t(b.user_frame)].frame.line}};
  for (size_t i = size_t(b.entry); i < b.frames.size(); ++i)
    if (b.frames[i].kind == explain::FrameKind::library) out.push_back({b.frames[i].name(), b.frames[i].frame.line});
  return out;
}

bool is_torch(const std::string& module) { return module == "torch" || util::starts_with(module, "torch."); }

bool same_path(const audit::Chain& c, const std::vector<std::pair<std::string, int>>& path) {
  if (c.steps.size() != path.size()) return false;
  for (size_t i = 0; i < path.size(); ++i)
    if (c.steps[i].name() != path[i].first || c.steps[i].line != path[i].second) return false;
  return true;
}

}  // namespace

void walk_user_code(Session& s, const audit::RuleSet& rules, Explanation& e) {
  // One walk per user function (file and log name), every file in one read.
  std::map<std::pair<std::string, std::string>, size_t> index;
  std::vector<std::string> paths;
  for (size_t i = 0; i < e.breaks.size(); ++i) {
    const ExplainedBreak& b = e.breaks[i];
    if (!b.in_library() || b.user_frame < 0) continue;
    const PlacedFrame& u = b.frames[size_t(b.user_frame)];
    auto key = std::make_pair(u.frame.file, u.frame.function);
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(key, e.user_walks.size()).first;
      UserWalk w;
      w.frame = u;
      w.frame.module = module_of_script(u.frame.file);
      w.frame.rel = u.frame.file.substr(u.frame.file.rfind('/') + 1);
      e.user_walks.push_back(std::move(w));
      if (!u.frame.file.empty() && u.frame.file[0] == '/') paths.push_back(u.frame.file);
    }
    e.user_walks[it->second].breaks.push_back(i);
  }
  if (e.user_walks.empty()) return;
  // Only Python sources the log may make us read (explain_sources.cpp): its text is quoted.
  std::map<std::string, std::string> refused;
  auto problems = user_source_problems(s, paths);
  std::vector<std::string> readable;
  for (size_t i = 0; i < paths.size(); ++i)
    if (problems[i].empty()) readable.push_back(paths[i]);
    else refused[paths[i]] = problems[i];
  std::map<std::string, host::FileData> files;
  for (auto& f : s.host.read(readable)) files.emplace(f.path, std::move(f));

  for (auto& w : e.user_walks) {
    if (auto no = refused.find(w.frame.frame.file); no != refused.end()) {
      w.problem = w.frame.frame.file + " is not read (" + no->second + "), so the walks start at the library";
      continue;
    }
    auto it = files.find(w.frame.frame.file);
    if (it == files.end() || !it->second.exists || it->second.is_dir) {
      w.problem = w.frame.frame.file + " is not on " + (s.host.local() ? "this machine" : s.host.name()) +
                  ", so the walks start at the library";
      continue;
    }
    ParsedFile pf;
    pf.text = it->second.content;
    pf.lines = util::split(pf.text, '\n');
    pf.facts = audit::extract(pf.text, w.frame.module, false);
    check_frame(w.frame, pf);
    if (!w.frame.mapped || w.frame.qualified.empty()) {
      w.problem = w.frame.problem.empty() ? w.frame.rel + " calls the library at module level; nothing to walk from"
                                          : w.frame.problem;
      continue;
    }
    w.walk.from = w.frame.name();
    // The script as its functions see it: its main part (inputs made, torch.compile,
    // prints) is on no path from them, and walking it read torch's import graph.
    std::vector<ExtraModule> extra{{w.frame.module, python::functions_view(pf.text), w.frame.rel}};
    try {
      // From the definition the traceback ran (a script may define `step` in each arm of an `if`).
      w.walk.graph = audit_calls(s, rules, {w.frame.module, w.frame.qualified, 0, w.frame.frame.line}, extra);
    } catch (const Error& err) {
      w.problem = std::string("audit could not walk from ") + w.frame.name() + ": " + err.what();
      continue;
    }
  }
}

void mark_user_chains(Explanation& e) {
  for (auto& w : e.user_walks) {
    w.walk.chains.clear();
    w.through_torch = 0;
    for (auto& c : w.walk.graph.chains) {
      if (c.steps.size() > 1 && is_torch(c.steps[1].module)) {
        ++w.through_torch;
        continue;
      }
      FollowUp f;
      f.chain = c;
      // Any break of the log, not only those entering from here: a shorter chain may reach the same call.
      for (size_t b = 0; b < e.breaks.size(); ++b)
        if (e.breaks[b].in_library() && e.breaks[b].user_frame >= 0 &&
            same_path(c, logged_path(e.breaks[b], w.frame.name()))) {
          f.state = FollowUp::logged;
          f.by = std::to_string(b);
        }
      if (f.state != FollowUp::logged) f.state = left_by(c, e.fixes, f.by, &f.by_code);
      w.walk.chains.push_back(std::move(f));
    }
  }
}

void fix_ahead(Session& s, Explanation& e) {
  for (auto& w : e.user_walks)
    for (auto& c : w.walk.chains) {
      if (c.state != FollowUp::remains || c.chain.steps.size() < 2 || c.chain.steps[1].root.empty()) continue;
      const audit::Step& entry = c.chain.steps[1];
      const audit::Step& last = c.chain.steps.back();
      std::string what = c.chain.operation + " at " + last.file + ":" + std::to_string(last.line);
      auto same = std::find_if(e.fixes.begin(), e.fixes.end(), [&](const Fix& f) { return f.name() == entry.name(); });
      if (same != e.fixes.end()) {
        same->ahead.push_back(what);
        continue;
      }
      Fix f = disable_fix(entry.module, entry.qualified);
      f.why = "keeps dynamo out of " + entry.qualified + ", which the walk from " + w.frame.name() +
              " finds reaching " + what + " (the log does not show it yet: dynamo stopped before)";
      if (const site::Distribution* d = s.distributions().owner(entry.root, entry.file)) {
        f.dist = d->name;
        f.version = d->version;
      }
      f.ahead.push_back(what);
      e.fixes.push_back(std::move(f));
      c.state = FollowUp::disabled;  // so the next chain through it finds this fix
      c.by = entry.name();
    }
}

}  // namespace sitepatch::engine::detail
