// Three-way merge of one file's text, by libgit2 (DESIGN.md: no hand-written merge).
// Undoing recipe A while keeping B: base = right after A, ours = now (A + B),
// theirs = before A; the result keeps B's edits and drops A's.
#include "sitepatch/store/history.hpp"
#include "store/git.hpp"

namespace sitepatch::store {

using namespace detail;

namespace {
git_merge_file_input input(const std::string& text, const std::string& path) {
  git_merge_file_input in = GIT_MERGE_FILE_INPUT_INIT;
  in.ptr = text.data();
  in.size = text.size();
  in.path = path.c_str();
  in.mode = GIT_FILEMODE_BLOB;
  return in;
}
}  // namespace

MergeResult merge3(const std::string& base, const std::string& ours, const std::string& theirs,
                   const std::string& path) {
  // The trivial cases, decided as git does before any merging; they also cover
  // binary content, which libgit2 would otherwise only report as a conflict.
  if (ours == theirs || base == theirs) return {true, ours};
  if (base == ours) return {true, theirs};
  init_libgit2();
  git_merge_file_input b = input(base, path), o = input(ours, path), t = input(theirs, path);
  git_merge_file_options opts = GIT_MERGE_FILE_OPTIONS_INIT;
  opts.ancestor_label = "base";
  opts.our_label = "ours";
  opts.their_label = "theirs";
  git_merge_file_result result{};
  check(git_merge_file(&result, &b, &o, &t, &opts), "cannot merge " + path, "");
  MergeResult out;
  out.clean = result.automergeable != 0;
  if (result.ptr)
    out.content.assign(result.ptr, result.len);
  else
    out.content = ours;  // binary conflict: libgit2 gives no content; keep the current file
  git_merge_file_result_free(&result);
  return out;
}

}  // namespace sitepatch::store
