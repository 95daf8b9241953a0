#pragma once
// audit over an environment (or any folder of sources): the engine fetches files
// through the Host in batches and hands their text to the audit module.
#include <functional>
#include <string>
#include <vector>

#include "sitepatch/audit/graph.hpp"
#include "sitepatch/audit/rules.hpp"
#include "sitepatch/audit/scan.hpp"
#include "sitepatch/engine/engine.hpp"

namespace sitepatch::engine {

/// Files done so far, of how many (called after each batch).
using Progress = std::function<void(std::size_t done, std::size_t total)>;

/// The call graph from `options.module:options.function` over the environment's
/// site-packages. With `owners`, also which distribution owns the entry and which
/// modules of the chains it owns (for --suggest; it costs reading the dist-infos).
struct CallAudit {
  audit::CallGraph graph;
  std::string entry_dist;     // distribution owning the entry's file, "" when none
  std::string entry_version;
  std::vector<std::string> entry_dist_modules;  // modules of the result owned by it
};
CallAudit audit_calls(Session& s, const audit::RuleSet& rules, const audit::WalkOptions& options, bool owners);

/// A module that is not in site-packages (the user's script a log names), served to
/// the walk before site-packages: its dotted name, the source, and the file to name.
struct ExtraModule {
  std::string name, source, file;
};
/// The same walk, from a function of `extra` or of the environment.
audit::CallGraph audit_calls(Session& s, const audit::RuleSet& rules, const audit::WalkOptions& options,
                             const std::vector<ExtraModule>& extra);

/// Which files a scan reads.
enum class ScanScope { package, module, all, path };

struct ScannedFile {
  std::string rel;     // relative to `root` (or to its site-packages)
  std::string dir;     // the folder `rel` is relative to: the --path folder, or a site folder
  std::string module;  // dotted, from the path
  std::vector<audit::Finding> findings;
  std::size_t bytes = 0;
};

struct ScanResult {
  std::string root;                // the folder, or "site-packages"
  std::vector<ScannedFile> files;  // those with findings, by path
  std::vector<std::string> scanned;  // rel of every file in scope, by path (what an ignore entry may name)
  std::size_t files_total = 0;
  std::size_t files_parsed = 0;    // kept by the text pre-filter
  std::size_t bytes_total = 0;
  std::size_t bytes_parsed = 0;
  std::size_t files_with_syntax_errors = 0;  // parsed with ERROR nodes: partly unread
  std::vector<std::string> links_out;  // --path: links below the folder leading out of it, not followed
};

/// Every direct flagged call in a distribution, a module prefix, every distribution,
/// or a folder. `s` may be null for ScanScope::path (no environment needed).
ScanResult audit_scan(host::Host& host, Session* s, const audit::RuleSet& rules, ScanScope scope,
                      const std::string& what, const Progress& progress);

}  // namespace sitepatch::engine
