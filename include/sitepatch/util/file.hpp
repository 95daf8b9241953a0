#pragma once
// Local file helpers. Utility tier: returns tl::expected for the failures callers handle.
//
// sitepatch often runs as root on folders other users may write to, so every file it
// creates is created in a folder opened once (later swaps of a path component change
// nothing), with O_EXCL|O_NOFOLLOW, at a name nobody can predict.
#include <optional>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

namespace sitepatch::util {

/// The most bytes sitepatch reads of one file: a module, a RECORD, a history object.
constexpr size_t kMaxFileBytes = size_t(64) << 20;

/// Whole file as bytes, or an error message naming the path. Only a regular file (a
/// FIFO, a device, a socket are refused before a byte is read, and opening one never
/// waits) of at most `max_bytes`.
tl::expected<std::string, std::string> read_file(const std::string& path, size_t max_bytes = kMaxFileBytes);

/// A file the user named on the command line: like read_file, but a pipe or a FIFO
/// (`<(cmd)`, /dev/stdin) is read too, up to `max_bytes`.
tl::expected<std::string, std::string> read_named_file(const std::string& path, size_t max_bytes = kMaxFileBytes);

/// "too large (N MB; sitepatch reads files of at most M MB)".
std::string too_large(size_t bytes, size_t max_bytes = kMaxFileBytes);

/// `n` random lowercase letters and digits (getrandom), for names nobody can plant ahead.
std::string random_name(size_t n = 12);

/// True for a name sitepatch gives its temporary files (`.<name>.sitepatch-<tag>.tmp`
/// or `.orig`): what an interrupted command can leave behind.
bool is_leftover_temp(std::string_view name);

/// The `<tag>` of such a name ("" for any other name).
std::string_view temp_tag_of(std::string_view name);

/// `.<base>.sitepatch-<tag><random>` + `suffix`: a temp's name, its writer's tag first.
std::string temp_name(std::string_view base, std::string_view tag, std::string_view suffix);

/// A folder opened once; its real path is what the kernel says the descriptor is.
class Dir {
 public:
  /// Opens `path` (symlinks in it are followed: the real folder is what counts). Throws
  /// sitepatch::Error naming the path.
  explicit Dir(const std::string& path);
  ~Dir();
  Dir(const Dir&) = delete;
  Dir& operator=(const Dir&) = delete;
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  /// The folder's real absolute path (/proc/self/fd), immune to later renames of `path`.
  std::string real_path() const;

 private:
  int fd_ = -1;
  std::string path_;
};

/// True when `path` is `root` or inside it (both absolute, normalised).
bool inside(const std::string& path, const std::string& root);

/// A file written to a private temp beside `path` and renamed over it only in commit();
/// the destructor removes an uncommitted temp. The rename breaks hard links.
class AtomicFile {
 public:
  /// `mode` is applied to the temp before the rename (-1: 0644). The temp is created
  /// in `path`'s folder with O_CREAT|O_EXCL|O_NOFOLLOW under a random name that begins
  /// with `tag` (temp_name).
  explicit AtomicFile(std::string path, int mode = -1, std::string_view tag = "");
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::string_view data);
  /// Makes the temp durable (fsync) without replacing anything yet.
  void stage();
  /// stage(), rename over the target, and (unless the caller does it once for many
  /// files) fsync the folder. Throws sitepatch::Error.
  void commit(bool sync_folder = true);
  /// Renames over the target without any fsync: for copies that can be fetched again.
  void commit_unsynced();
  /// stage(), then puts the file at the target only if nothing is there (a link, not a
  /// rename: an existing file, or a dangling symlink, is left alone and this throws).
  void commit_new();
  /// The folder the temp lives in (opened once).
  const Dir& dir() const { return dir_; }
  const std::string& tmp_name() const { return tmp_; }

 private:
  void close_temp(bool sync);
  void replace();
  std::string path_;
  std::string base_;
  Dir dir_;
  std::string tmp_;  // name inside dir_
  int fd_ = -1;
  bool committed_ = false;
};

/// Where the link `path` leads, as it says it ("?" when it cannot be read).
std::string link_target(const std::string& path);

}  // namespace sitepatch::util
