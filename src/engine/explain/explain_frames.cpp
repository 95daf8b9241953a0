// explain, step 1: each frame of a break found in the environment by its path below
// site-packages, parsed once per file, and checked: the function its line is in now
// must be the one the log names (and the line must read as the log shows it), or the
// frame is stale: the package changed since the log was written.
#include <cctype>
#include <map>
#include <set>

#include "engine/edits/locate.hpp"
#include "engine/explain/explain_impl.hpp"
#include "sitepatch/site/distribution.hpp"
#include "sitepatch/util/parallel.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {

namespace {

// The innermost function whose lines hold `line`; 0 (the top level) when none does.
int function_at(const audit::ModuleFacts& m, int line) {
  int best = 0;
  for (size_t i = 1; i < m.functions.size(); ++i) {
    const auto& f = m.functions[i];
    if (f.line <= line && line <= f.end_line && (best == 0 || f.line >= m.functions[size_t(best)].line))
      best = int(i);
  }
  return best;
}

std::string what_of(const audit::Function& f) {
  if (f.is_property) return "property";
  if (f.cls >= 0) return "method";
  if (f.parent > 0) return "nested function";
  return "function";
}

std::string last_segment(const std::string& q) {
  size_t dot = q.rfind('.');
  return dot == std::string::npos ? q : q.substr(dot + 1);
}

// The function a frame runs: dynamo names the code it resumes a function with after a
// break `torch_dynamo_resume_in_<function>_at_<line>`; that code is the function's own.
std::string resumed(const std::string& fn) {
  const std::string head = "torch_dynamo_resume_in_";
  if (!util::starts_with(fn, head)) return fn;
  size_t at = fn.rfind("_at_");
  if (at == std::string::npos || at <= head.size() || at + 4 >= fn.size()) return fn;
  for (size_t i = at + 4; i < fn.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(fn[i]))) return fn;
  return fn.substr(head.size(), at - head.size());
}

}  // namespace

// The log's function checked against what the file holds at its line now.
void detail::check_frame(PlacedFrame& p, const detail::ParsedFile& file) {
  const auto& facts = file.facts;
  if (p.frame.skipped) {
    // Placed from dynamo's words, not its stack: the module-level function of that name.
    for (const audit::Function& f : facts.functions)
      if (f.qualified == p.frame.function && f.parent <= 0 && f.cls < 0) {
        p.frame.line = f.line;
        p.qualified = f.qualified;
        p.what = what_of(f);
        p.def_line = f.line;
        p.mapped = true;
        return;
      }
    p.stale = true;
    p.problem = p.rel + " has no module-level function `" + p.frame.function + "` now (the package changed since the log)";
    return;
  }
  int at = function_at(facts, p.frame.line);
  int lines = int(file.lines.size());
  if (p.frame.line < 1 || p.frame.line > lines) {
    p.stale = true;
    p.problem = p.rel + " has " + std::to_string(lines) + " lines now; the log's line " +
                std::to_string(p.frame.line) + " is not there (the package changed since the log)";
    return;
  }
  const std::string fn = resumed(p.frame.function);
  bool comprehension = util::starts_with(fn, "<") && fn != "<module>";  // <lambda>, <listcomp>, <genexpr>
  if (at == 0) {
    if (fn != "<module>" && !comprehension) {
      p.stale = true;
      p.problem = p.rel + ":" + std::to_string(p.frame.line) + " is at module level now, not in `" + fn +
                  "` (the package changed since the log)";
      return;
    }
    p.what = "module level";
  } else {
    const audit::Function& f = facts.functions[size_t(at)];
    if (!comprehension && last_segment(f.qualified) != fn) {
      p.stale = true;
      p.problem = p.rel + ":" + std::to_string(p.frame.line) + " is in `" + f.qualified + "` now, not in `" + fn +
                  "` (the package changed since the log)";
      return;
    }
    p.qualified = f.qualified;
    p.what = what_of(f);
    p.def_line = f.line;
  }
  // The log's text is read escaped (explain::read_log), and the file's line is quoted to a
  // terminal: compared and shown escaped alike.
  std::string now = util::printable(util::trim(file.lines[size_t(p.frame.line - 1)]));
  if (!p.frame.code.empty() && now != p.frame.code) {
    p.stale = true;
    p.problem = p.rel + ":" + std::to_string(p.frame.line) + " reads `" + now + "` now, not `" + p.frame.code +
                "` (the package changed since the log)";
    return;
  }
  p.mapped = true;
}

std::vector<PlacedFrame> place_by_path(const explain::Break& b) {
  std::vector<PlacedFrame> out;
  for (auto& f : b.frames) {
    PlacedFrame p;
    p.frame = f;
    p.kind = explain::kind_of(f);
    p.rel = explain::below_site(f.file);
    if (p.kind == explain::FrameKind::stdlib) p.module = explain::stdlib_module(f.file);
    else if (!p.rel.empty()) p.module = site::module_for_file(p.rel);
    out.push_back(std::move(p));
  }
  return out;
}

namespace detail {

std::map<std::string, ParsedFile> place_frames(Session& s, std::vector<ExplainedBreak>& breaks) {
  // Every library file any break names, each candidate site folder, in one read.
  // Only files below a site folder, and only Python sources: the log names them, anyone
  // may write a log, and a frame's line is quoted from the file.
  std::set<std::string> rels;
  for (auto& b : breaks)
    for (auto& p : b.frames)
      if (p.kind == explain::FrameKind::library && library_source_problem(p.rel).empty()) rels.insert(p.rel);
  std::vector<std::string> paths;
  for (auto& rel : rels)
    for (auto& dir : s.env.site_dirs) paths.push_back(dir + "/" + rel);
  std::map<std::string, host::FileData> read;
  for (auto& f : s.host.read(paths)) read.emplace(f.path, std::move(f));

  std::map<std::string, ParsedFile> files;  // by rel: the first site folder holding it
  for (auto& rel : rels)
    for (auto& dir : s.env.site_dirs) {
      auto it = read.find(dir + "/" + rel);
      if (it == read.end() || !it->second.exists || it->second.is_dir) continue;
      ParsedFile& pf = files[rel];
      pf.site_dir = dir;
      pf.text = std::move(it->second.content);
      break;
    }
  std::vector<std::string> keys;
  for (auto& [rel, pf] : files) keys.push_back(rel);
  util::parallel_for(keys.size(), [&](size_t i) {
    ParsedFile& pf = files[keys[i]];
    pf.facts = audit::extract(pf.text, site::module_for_file(keys[i]), util::ends_with(keys[i], "/__init__.py"));
    pf.lines = util::split(pf.text, '\n');
  });

  std::vector<std::pair<std::string, std::string>> owned;
  for (auto& [rel, pf] : files) owned.push_back({pf.site_dir, rel});
  s.distributions().prefetch(owned);
  // A source its compiled twin shadows is not what runs here: no fix goes in it.
  std::map<std::string, std::string> twin_of;
  auto twins = detail::shadowing_twins(s, owned);
  for (size_t i = 0; i < owned.size(); ++i)
    if (!twins[i].empty()) twin_of[owned[i].second] = twins[i];
  for (auto& b : breaks)
    for (auto& p : b.frames) {
      if (p.kind != explain::FrameKind::library) continue;
      auto it = files.find(p.rel);
      if (std::string no = library_source_problem(p.rel); !no.empty()) {
        p.problem = no;
        continue;
      }
      if (it == files.end()) {
        p.problem = p.rel + " is not in this environment's site-packages";
        continue;
      }
      p.site_dir = it->second.site_dir;
      if (const site::Distribution* d = s.distributions().owner(p.site_dir, p.rel)) {
        p.dist = d->name;
        p.version = d->version;
      }
      if (auto twin = twin_of.find(p.rel); twin != twin_of.end()) {
        p.compiled = twin->second;
        p.problem = p.rel + " is compiled here: Python imports its twin " + twin->second +
                    " instead, so no edit of the source runs (the log may come from another environment); "
                    "fix its caller";
        continue;
      }
      check_frame(p, it->second);
    }
  return files;
}

}  // namespace detail

}  // namespace sitepatch::engine
