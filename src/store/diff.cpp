// Unified diffs with git headers, by libgit2 (DESIGN.md: no hand-written diff).
#include "sitepatch/store/history.hpp"
#include "store/git.hpp"

namespace sitepatch::store {

using namespace detail;

std::string unified_diff(const std::string& old_text, const std::string& new_text,
                         const std::string& path) {
  if (old_text == new_text) return {};
  init_libgit2();
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  opts.context_lines = 3;
  opts.interhunk_lines = 0;
  // The same path on both sides gives "diff --git a/<path> b/<path>", "--- a/<path>",
  // "+++ b/<path>"; content libgit2 finds binary (NUL bytes) becomes
  // "Binary files a/<path> and b/<path> differ".
  git_patch* raw = nullptr;
  check(git_patch_from_buffers(&raw, old_text.data(), old_text.size(), path.c_str(),
                               new_text.data(), new_text.size(), path.c_str(), &opts),
        "cannot diff " + path, "");
  PatchPtr patch(raw);
  git_buf buf = GIT_BUF_INIT;
  check(git_patch_to_buf(&buf, patch.get()), "cannot format the diff of " + path, "");
  std::string out(buf.ptr ? buf.ptr : "", buf.size);
  git_buf_dispose(&buf);
  return out;
}

namespace {

// libgit2's line diff of two texts, with no lines of context.
PatchPtr line_patch(const std::string& old_text, const std::string& new_text) {
  init_libgit2();
  git_diff_options opts = GIT_DIFF_OPTIONS_INIT;
  opts.context_lines = 0;
  git_patch* raw = nullptr;
  check(git_patch_from_buffers(&raw, old_text.data(), old_text.size(), nullptr, new_text.data(), new_text.size(),
                               nullptr, &opts),
        "cannot diff", "");
  return PatchPtr(raw);
}

}  // namespace

std::vector<std::string> added_lines(const std::string& old_text, const std::string& new_text) {
  std::vector<std::string> out;
  if (old_text == new_text) return out;
  PatchPtr patch = line_patch(old_text, new_text);
  for (size_t h = 0; h < git_patch_num_hunks(patch.get()); ++h) {
    int lines = git_patch_num_lines_in_hunk(patch.get(), h);
    for (int k = 0; k < lines; ++k) {
      const git_diff_line* l = nullptr;
      if (git_patch_get_line_in_hunk(&l, patch.get(), h, size_t(k)) != 0 || l->origin != GIT_DIFF_LINE_ADDITION)
        continue;
      std::string text(l->content, l->content_len);
      while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
      out.push_back(std::move(text));
    }
  }
  return out;
}

std::vector<std::pair<size_t, size_t>> changed_rows(const std::string& old_text, const std::string& new_text) {
  std::vector<std::pair<size_t, size_t>> out;
  if (old_text == new_text) return out;
  PatchPtr patch = line_patch(old_text, new_text);
  for (size_t h = 0; h < git_patch_num_hunks(patch.get()); ++h) {
    const git_diff_hunk* hunk = nullptr;
    if (git_patch_get_hunk(&hunk, nullptr, patch.get(), h) != 0) continue;
    // A hunk that only deletes has no new lines: it stands between new_start and the
    // line after it, both of which it changes the meaning of.
    size_t first = hunk->new_start > 0 ? size_t(hunk->new_start) - 1 : 0;
    size_t last = hunk->new_lines > 0 ? first + size_t(hunk->new_lines) - 1 : first + 1;
    out.emplace_back(first, last);
  }
  return out;
}

}  // namespace sitepatch::store
