#pragma once
// Which installed distribution owns which file, asked through a Host. It sits above
// site (the pure formats it parses) and beside the Host it asks: site never reaches the
// machine itself.
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sitepatch/site/distribution.hpp"

namespace sitepatch::host {

class Host;

/// Which distribution owns which file, across an environment's site dirs. Built by
/// `load_distributions`, it asks the host per question (Host::search, answered where
/// the files are): `owner` gets only the file-list rows naming the file and the
/// metadata of the distributions holding them; `find` only the dist-infos whose folder
/// name encodes the name asked; `all` everything. What crosses a connection grows with
/// the answers, not with the number of distributions. Safe to ask from several threads.
class DistributionIndex {
 public:
  DistributionIndex();
  ~DistributionIndex();
  DistributionIndex(DistributionIndex&&) noexcept;
  DistributionIndex& operator=(DistributionIndex&&) noexcept;
  /// A distribution known in full (tests; eager).
  void add(site::Distribution d);
  /// The distribution whose RECORD lists `rel` in `site_dir` (the first in folder order
  /// when several do), else one that owns its top-level package whole; nullptr if none.
  const site::Distribution* owner(const std::string& site_dir, const std::string& rel) const;
  /// Asks, in one round trip, what `owner` needs for these (site dir, rel) files: many
  /// owner questions, one search.
  void prefetch(const std::vector<std::pair<std::string, std::string>>& files) const;
  /// By normalized name (PEP 503).
  const site::Distribution* find(std::string_view name) const;
  /// Every file `d` (from this index) lists, read on first use.
  const std::vector<site::RecordEntry>& files(const site::Distribution& d) const;
  /// Every distribution, read in full, in folder order (the same objects `owner` and
  /// `find` answer with).
  const std::vector<const site::Distribution*>& all() const;

  struct Lazy;  // the host and what was read so far

 private:
  std::deque<site::Distribution> known_;  // what questions found; pointers handed out stay valid
  std::vector<const site::Distribution*> all_;
  std::unique_ptr<Lazy> lazy_;
  void read_all() const;  // under lazy_'s lock
  const site::Distribution* named_anywhere(const std::string& normalized) const;  // ditto
  friend DistributionIndex load_distributions(host::Host& host, const std::vector<std::string>& site_dirs,
                                              const std::string& prefix);
};

/// The distributions of `site_dirs`, read through `host` when asked (nothing is read
/// here), so `host` must outlive the index. With `prefix`, a conda environment's
/// `conda-meta/*.json` names the owner of a file no dist-info or egg-info lists.
DistributionIndex load_distributions(host::Host& host, const std::vector<std::string>& site_dirs,
                                     const std::string& prefix = "");

}  // namespace sitepatch::host
