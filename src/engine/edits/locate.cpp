#include "engine/edits/locate.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "engine/internal.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine::detail {
namespace {

// Python's finder prefers a package (a/b/__init__.py) over a module (a/b.py).
std::vector<std::string> candidates_for(const recipe::Edit& e, std::string& error) {
  if (!e.file.empty()) {
    if (auto why = site::unsafe_relative_path(e.file)) {
      error = "file " + e.file + ": " + *why + "; recipes touch only files inside site-packages";
      return {};
    }
    return {e.file};
  }
  auto c = site::module_candidates(e.module);
  if (c.empty()) error = "`" + e.module + "` is not a valid module name";
  std::stable_partition(c.begin(), c.end(),
                        [](const std::string& p) { return util::ends_with(p, "/__init__.py"); });
  return c;
}

// "did you mean" for a module that is not there: siblings in its parent package.
std::string module_hint(Session& s, const recipe::Edit& e) {
  std::string dotted = e.module.empty() ? site::module_for_file(e.file) : e.module;
  auto parts = util::split(dotted, '.');
  std::string leaf = parts.back();
  parts.pop_back();
  std::string parent = util::join(parts, "/");
  std::vector<std::string> names;
  for (auto& dir : s.env.site_dirs) {
    for (auto& entry : s.host.list(parent.empty() ? dir : dir + "/" + parent)) {
      std::string n = entry.name;
      if (!entry.is_dir && util::ends_with(n, ".py")) n = n.substr(0, n.size() - 3);
      else if (!entry.is_dir) continue;
      if (n == "__init__" || n == "__pycache__" || n.find('.') != std::string::npos) continue;
      names.push_back(parts.empty() ? n : util::join(parts, ".") + "." + n);
    }
  }
  auto near = util::nearest(dotted, names);
  if (near.empty()) return "";
  return "; did you mean " + util::join(near, ", ") + "?";
}

}  // namespace

namespace {

// Each candidate in each site folder, once, in order.
std::vector<std::string> paths_in_site_dirs(const Session& s, const std::vector<std::vector<std::string>>& cands) {
  std::vector<std::string> paths;
  std::set<std::string> seen;
  for (auto& list : cands)
    for (auto& dir : s.env.site_dirs)
      for (auto& c : list)
        if (seen.insert(dir + "/" + c).second) paths.push_back(dir + "/" + c);
  return paths;
}

}  // namespace

std::vector<std::string> candidate_paths(const Session& s, const std::vector<const recipe::Edit*>& edits) {
  std::vector<std::vector<std::string>> cands;
  std::string error;  // locate reports it
  for (auto* e : edits) cands.push_back(candidates_for(*e, error));
  return paths_in_site_dirs(s, cands);
}

std::vector<std::string> candidate_twin_paths(const Session& s, const std::vector<const recipe::Edit*>& edits) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  std::string error;
  for (auto* e : edits)
    for (auto& rel : candidates_for(*e, error))
      for (auto& dir : s.env.site_dirs)
        for (auto& t : site::compiled_twins(rel, s.env.ext_suffixes))
          if (seen.insert(dir + "/" + t).second) out.push_back(dir + "/" + t);
  return out;
}

std::vector<Located> locate(Session& s, const std::vector<const recipe::Edit*>& edits) {
  std::vector<Located> out(edits.size());
  std::vector<std::vector<std::string>> cands(edits.size());
  for (size_t i = 0; i < edits.size(); ++i) cands[i] = candidates_for(*edits[i], out[i].error);
  auto paths = paths_in_site_dirs(s, cands);
  std::map<std::string, host::FileData> files;
  for (auto& f : s.host.read(paths)) files.emplace(f.path, std::move(f));
  // One copy of each file, however many edits it has.
  std::map<std::string, std::shared_ptr<const std::string>> content_of;

  // Pick each edit's file, then check every picked file really lies inside its site dir.
  std::vector<std::string> to_resolve;
  std::set<std::string> resolving;
  for (size_t i = 0; i < edits.size(); ++i) {
    if (!out[i].error.empty()) continue;
    for (auto& dir : s.env.site_dirs) {
      for (auto& c : cands[i]) {
        auto it = files.find(dir + "/" + c);
        if (it == files.end() || !it->second.exists || it->second.is_dir) continue;
        out[i].ok = true;
        out[i].rel = c;
        out[i].site_dir = dir;
        out[i].path = it->first;
        auto& shared = content_of[it->first];
        if (!shared) shared = std::make_shared<const std::string>(std::move(it->second.content));
        out[i].content = shared;
        break;
      }
      if (out[i].ok) break;
    }
    if (!out[i].ok) {
      const auto& e = *edits[i];
      out[i].error = (e.file.empty() ? "module " + e.module : "file " + e.file) +
                     " not found in " + util::join(s.env.site_dirs, ", ") + module_hint(s, e);
      continue;
    }
    if (resolving.insert(out[i].path).second) to_resolve.push_back(out[i].path);
  }
  if (to_resolve.empty()) return out;
  // One round for both: where each file really lies, and which compiled twins exist (a
  // path that leads nowhere has no real path).
  std::vector<std::pair<std::string, std::string>> files_ok;
  std::vector<size_t> which;
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i].ok) {
      files_ok.emplace_back(out[i].site_dir, out[i].rel);
      which.push_back(i);
    }
  TwinQuery twins = twin_query(s, files_ok);
  std::vector<std::string> ask = to_resolve;
  ask.insert(ask.end(), s.env.site_dirs.begin(), s.env.site_dirs.end());
  size_t twins_at = ask.size();
  ask.insert(ask.end(), twins.paths.begin(), twins.paths.end());
  auto real = s.host.realpath(ask);
  std::map<std::string, std::optional<std::string>> real_of;
  for (size_t i = 0; i < twins_at && i < real.size(); ++i) real_of[ask[i]] = real[i];
  std::vector<bool> twin_exists;
  for (size_t i = twins_at; i < ask.size(); ++i) twin_exists.push_back(i < real.size() && real[i].has_value());
  for (auto& l : out) {
    if (!l.ok) continue;
    auto rp = real_of[l.path];
    auto rd = real_of[l.site_dir];
    if (!rp || !rd || !site::is_within(*rp, *rd)) {
      l.ok = false;
      l.error = l.rel + " resolves to " + (rp ? *rp : std::string("nothing")) +
                ", outside site-packages (" + l.site_dir + "); refusing to touch it";
    }
  }
  auto found = twins_found(twins, twin_exists, files_ok.size());
  for (size_t k = 0; k < which.size(); ++k) {
    Located& l = out[which[k]];
    if (!l.ok || found[k].empty()) continue;
    const auto& e = *edits[which[k]];
    l.ok = false;
    l.error = shadowed_message(l.rel, e.module.empty() ? site::module_for_file(l.rel) : e.module, found[k]);
  }
  return out;
}

TwinQuery twin_query(const Session& s, const std::vector<std::pair<std::string, std::string>>& files) {
  // Every folder up to the file's own is asked, in sys.path's order: the first that holds
  // any loader's file for the name is where the finder stops.
  TwinQuery q;
  for (size_t i = 0; i < files.size(); ++i) {
    auto& [site_dir, rel] = files[i];
    auto twins = site::compiled_twins(rel, s.env.ext_suffixes);
    for (auto& dir : s.env.site_dirs) {
      for (auto& t : twins) {
        q.paths.push_back(dir + "/" + t);
        q.owner.push_back(i);
      }
      if (dir == site_dir) break;
    }
  }
  return q;
}

std::vector<std::string> twins_found(const TwinQuery& q, const std::vector<bool>& exists, size_t files) {
  std::vector<std::string> found(files);
  for (size_t k = 0; k < q.paths.size() && k < exists.size(); ++k)
    if (exists[k] && found[q.owner[k]].empty()) found[q.owner[k]] = q.paths[k];
  return found;
}

std::vector<std::string> shadowing_twins(Session& s, const std::vector<std::pair<std::string, std::string>>& files) {
  TwinQuery q = twin_query(s, files);
  if (q.paths.empty()) return std::vector<std::string>(files.size());
  // realpath, not stat: a caller can read it ahead in a wait it has anyway.
  std::vector<bool> exists;
  for (auto& r : s.host.realpath(q.paths)) exists.push_back(r.has_value());
  return twins_found(q, exists, files.size());
}

std::string shadowed_message(const std::string& rel, const std::string& module, const std::string& twin) {
  return rel + " is not what `import " + module + "` loads: " + twin +
         ", a compiled twin, is (the import system tries extension modules before source), so an edit of the "
         "source would never run; install the package without its compiled parts where it offers that, or patch "
         "the code that calls it";
}

}  // namespace sitepatch::engine::detail
