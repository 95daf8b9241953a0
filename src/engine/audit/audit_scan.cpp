// audit --package/--module/--all/--path: which files, then read them in batches and
// hand each text to audit::scan_text on the workers (pre-filter, then only the blocks
// that can hold a flagged name). Only one batch of texts is held at a time, each tree
// is freed as soon as its facts are read, and the trees alive at once across threads
// are bounded by the source bytes they came from (kParseBudget).
#include <algorithm>
#include <set>

#include <spdlog/spdlog.h>

#include "engine/internal.hpp"
#include "sitepatch/engine/audit.hpp"
#include "sitepatch/audit/scan.hpp"
#include "sitepatch/util/budget.hpp"
#include "sitepatch/util/error.hpp"
#include "sitepatch/util/parallel.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {

namespace {

// Source bytes being parsed at once, all threads together (see audit_scan).
constexpr size_t kParseBudget = 256 * 1024;

using Source = detail::PyFile;

std::string module_name(const std::string& rel) { return site::module_for_file(rel); }

std::vector<Source> record_files(host::Host& host, const site::Distribution& d,
                                 const std::vector<site::RecordEntry>& rows) {
  std::vector<Source> out;
  for (auto& r : rows) {
    std::string rel = site::normalize_record_path(r.path);
    if (!util::ends_with(rel, ".py") || util::starts_with(rel, "..") || site::unsafe_relative_path(rel)) continue;
    out.push_back({d.site_dir + "/" + rel, rel});
  }
  // An egg-info that lists no files (Debian's python3-torch) owns its top-level
  // packages whole: their folders are its files.
  std::vector<std::string> tops;
  for (auto& t : d.top_level)
    if (!site::unsafe_relative_path(t)) tops.push_back(t);
  if (tops.empty()) return out;
  std::vector<std::string> probe;
  for (auto& t : tops) probe.insert(probe.end(), {d.site_dir + "/" + t, d.site_dir + "/" + t + ".py"});
  auto found = host.read(probe);
  for (size_t i = 0; i < tops.size(); ++i) {
    if (found[2 * i].exists && found[2 * i].is_dir) {
      auto more = detail::python_files(host, d.site_dir + "/" + tops[i], tops[i] + "/");
      out.insert(out.end(), more.begin(), more.end());
    } else if (found[2 * i + 1].exists && !found[2 * i + 1].is_dir) {
      out.push_back({found[2 * i + 1].path, tops[i] + ".py"});
    }
  }
  return out;
}

std::vector<Source> sources(host::Host& host, Session* s, ScanScope scope, const std::string& what,
                            std::string& root, std::vector<std::string>& links_out) {
  std::vector<Source> files;
  switch (scope) {
    case ScanScope::path: {
      auto st = host.read({what});
      if (!st[0].exists) throw Error("--path " + what + ": no such folder", Exit::usage);
      if (!st[0].is_dir) throw Error("--path " + what + ": not a folder", Exit::usage);
      root = what;
      return detail::python_files(host, what, "", &links_out);
    }
    case ScanScope::package: {
      const site::Distribution* d = s->distributions().find(what);
      if (!d) {
        std::vector<std::string> names;
        for (auto* x : s->distributions().all()) names.push_back(x->name);
        auto near = util::nearest(what, names);
        throw Error("distribution `" + what + "` is not installed in " + s->env.prefix +
                        (near.empty() ? "" : "; did you mean " + util::join(near, ", ") + "?"),
                    Exit::failed);
      }
      root = d->name + " " + d->version;
      return record_files(host, *d, s->distributions().files(*d));
    }
    case ScanScope::all: {
      root = s->env.prefix;
      std::set<std::string> seen;
      for (auto* d : s->distributions().all())
        for (auto& f : record_files(host, *d, d->record))
          if (seen.insert(f.path).second) files.push_back(f);
      return files;
    }
    case ScanScope::module: {
      if (site::module_candidates(what).empty())
        throw Error("`" + what + "` is not a valid module name", Exit::usage);
      std::string rel = util::join(util::split(what, '.'), "/");
      root = what;
      for (auto& dir : s->env.site_dirs) {
        auto st = host.read({dir + "/" + rel + ".py", dir + "/" + rel});
        if (st[1].exists && st[1].is_dir) return detail::python_files(host, dir + "/" + rel, rel + "/");
        if (st[0].exists && !st[0].is_dir) return {{dir + "/" + rel + ".py", rel + ".py"}};
      }
      throw Error("module `" + what + "` not found in " + util::join(s->env.site_dirs, ", "));
    }
  }
  return files;
}

}  // namespace

ScanResult audit_scan(host::Host& host, Session* s, const audit::RuleSet& rules, ScanScope scope,
                      const std::string& what, const Progress& progress) {
  ScanResult out;
  std::vector<Source> files = sources(host, s, scope, what, out.root, out.links_out);
  std::sort(out.links_out.begin(), out.links_out.end());
  std::sort(files.begin(), files.end(), [](const Source& a, const Source& b) { return a.rel < b.rel; });
  out.files_total = files.size();
  for (const Source& f : files) out.scanned.push_back(f.rel);
  const audit::Prefilter filter(rules);
  // Trees cost about a hundred times their text: parses in flight across threads hold
  // at most this much source, so peak memory does not grow with the thread count.
  util::ByteBudget budget(kParseBudget);
  // A batch is one read: small locally (texts in memory stay few), large over ssh
  // (each read is a round trip).
  const size_t batch = host.local() ? 256 : 1024;
  for (size_t start = 0; start < files.size(); start += batch) {
    size_t end = std::min(files.size(), start + batch);
    std::vector<std::string> paths;
    for (size_t i = start; i < end; ++i) paths.push_back(files[i].path);
    auto data = host.read(paths);
    // The pre-filter runs on the workers too: it reads every byte of every file.
    std::vector<ScannedFile> found(data.size());
    std::vector<audit::TextScan> scanned(data.size());
    std::vector<size_t> sizes(data.size(), 0);
    util::parallel_for(data.size(), [&](size_t k) {
      std::string text = std::move(data[k].content);  // freed when this file is done
      sizes[k] = text.size();
      if (!data[k].exists || data[k].is_dir) return;
      const Source& src = files[start + k];
      std::string mod = module_name(src.rel);
      scanned[k] = audit::scan_text(text, mod, util::ends_with(src.rel, "__init__.py"), rules, filter, &budget);
      std::string dir = src.path.substr(0, src.path.size() - std::min(src.path.size(), src.rel.size() + 1));
      found[k] = ScannedFile{src.rel, dir, mod, std::move(scanned[k].findings), text.size()};
    });
    for (size_t k = 0; k < data.size(); ++k) {
      out.bytes_total += sizes[k];
      if (!scanned[k].parsed) continue;
      ++out.files_parsed;
      out.files_with_syntax_errors += scanned[k].syntax_errors;
      out.bytes_parsed += scanned[k].bytes_parsed;
      if (!found[k].findings.empty()) out.files.push_back(std::move(found[k]));
    }
    if (progress) progress(end, files.size());
  }
  spdlog::info("audit: {} files ({} bytes), {} parsed ({} bytes) after the text pre-filter", out.files_total,
               out.bytes_total, out.files_parsed, out.bytes_parsed);
  return out;
}

}  // namespace sitepatch::engine
