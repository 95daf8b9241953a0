// Three-way merge of a sequence of units (a module's statements, say): libgit2 diffs the
// units (each made one line of a token text) base -> ours and base -> theirs, and the
// hunks are joined here. Unlike git_merge_file, two hunks that only touch (one ends where
// the other begins) do not conflict: a hotfix on the statement next to a patched one is
// not a change of the patched one.
#include <algorithm>
#include <map>

#include "sitepatch/store/history.hpp"
#include "store/git.hpp"

namespace sitepatch::store {

using namespace detail;

namespace {

/// One change of a side: base units [from, to) become `units` (from == to: an insertion).
struct Hunk {
  size_t from, to;
  std::vector<std::string> units;
};

/// Each distinct unit one token line ("7\n"), the same across the three sequences.
std::string tokens(const std::vector<std::string>& units, std::map<std::string, size_t>& ids) {
  std::string out;
  for (auto& u : units) out += std::to_string(ids.emplace(u, ids.size()).first->second) + "\n";
  return out;
}

std::vector<Hunk> hunks(const std::string& base, const std::string& side, const std::vector<std::string>& units) {
  std::vector<Hunk> out;
  if (base == side) return out;
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  opts.context_lines = 0;
  opts.interhunk_lines = 0;
  git_patch* raw = nullptr;
  check(git_patch_from_buffers(&raw, base.data(), base.size(), nullptr, side.data(), side.size(), nullptr, &opts),
        "cannot diff", "");
  PatchPtr patch(raw);
  for (size_t h = 0; h < git_patch_num_hunks(patch.get()); ++h) {
    const git_diff_hunk* gh = nullptr;
    check(git_patch_get_hunk(&gh, nullptr, patch.get(), h), "cannot diff", "");
    // Line numbers are 1-based; a side with no lines in the hunk names the line before it.
    Hunk k;
    k.from = gh->old_lines ? size_t(gh->old_start - 1) : size_t(gh->old_start);
    k.to = k.from + size_t(gh->old_lines);
    size_t first = gh->new_lines ? size_t(gh->new_start - 1) : size_t(gh->new_start);
    k.units.assign(units.begin() + long(first), units.begin() + long(first + size_t(gh->new_lines)));
    out.push_back(std::move(k));
  }
  return out;
}

/// Whether two hunks of the two sides change the same units, or insert at one point.
bool clash(const Hunk& a, const Hunk& b) {
  if (a.from == b.from && a.to == b.to && a.units == b.units) return false;  // the same change: once
  bool a_ins = a.from == a.to, b_ins = b.from == b.to;
  if (a_ins && b_ins) return a.from == b.from && a.units != b.units;
  if (a_ins) return b.from < a.from && a.from < b.to;
  if (b_ins) return a.from < b.from && b.from < a.to;
  return a.from < b.to && b.from < a.to;
}

}  // namespace

std::optional<std::vector<std::string>> merge_units(const std::vector<std::string>& base,
                                                    const std::vector<std::string>& ours,
                                                    const std::vector<std::string>& theirs) {
  init_libgit2();
  std::map<std::string, size_t> ids;
  std::string b = tokens(base, ids), o = tokens(ours, ids), t = tokens(theirs, ids);
  auto mine = hunks(b, o, ours), other = hunks(b, t, theirs);
  for (auto& m : mine)
    for (auto& x : other)
      if (clash(m, x)) return std::nullopt;
  // Both sides' hunks in base order; at one point an insertion goes before a change that
  // starts there, and the same insertion on both sides once.
  std::vector<const Hunk*> all;
  for (auto& m : mine) all.push_back(&m);
  for (auto& x : other)
    if (std::none_of(mine.begin(), mine.end(), [&](auto& m) { return m.from == x.from && m.to == x.to && m.units == x.units; }))
      all.push_back(&x);
  std::stable_sort(all.begin(), all.end(), [](const Hunk* a, const Hunk* b) {
    if (a->from != b->from) return a->from < b->from;
    return (a->from == a->to) > (b->from == b->to);
  });
  std::vector<std::string> out;
  size_t at = 0;
  for (const Hunk* h : all) {
    out.insert(out.end(), base.begin() + long(at), base.begin() + long(h->from));
    out.insert(out.end(), h->units.begin(), h->units.end());
    at = std::max(at, h->to);
  }
  out.insert(out.end(), base.begin() + long(at), base.end());
  return out;
}

}  // namespace sitepatch::store
