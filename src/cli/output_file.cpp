// One rule for the files commands write where the user said: refused where another user
// could steer them (a link planted in a shared folder once made root replace a file in a
// root-only one), and written through the descriptor of the folder that was checked.
#include "output_file.hpp"

#include <sys/stat.h>

#include <filesystem>

#include "sitepatch/util/error.hpp"
#include "sitepatch/util/file.hpp"
#include "sitepatch/util/safe_path.hpp"

namespace sitepatch::cli {

namespace {

std::string absolute_path(const std::string& path) {
  std::error_code ec;
  return std::filesystem::absolute(path, ec).lexically_normal().string();
}

}  // namespace

void check_output_file(const std::string& path, const std::string& option, const std::string& what) {
  if (path.empty() || path == "-") return;
  // The file as it will be made: in a sticky folder (/tmp) only its own entry counts.
  if (auto why = util::unsafe_path(absolute_path(path)))
    throw Error(option + " " + path + ": " + *why + "; write the " + what + " into a folder only you can change",
                Exit::usage);
}

void write_output_file(const std::string& path, std::string_view text, const std::string& option,
                       const std::string& what, bool replace) {
  check_output_file(path, option, what);
  util::AtomicFile f(path);
  // The folder opened is the one checked: nobody else can change the path, so only a
  // change by the caller would differ, and then nothing is written either.
  struct stat opened {}, checked {};
  std::string folder = std::filesystem::path(absolute_path(path)).parent_path().string();
  if (::fstat(f.dir().fd(), &opened) != 0 || ::stat(folder.c_str(), &checked) != 0 || opened.st_dev != checked.st_dev ||
      opened.st_ino != checked.st_ino)
    throw Error(option + " " + path + ": its folder changed while it was written; nothing was written");
  f.write(text);
  if (replace) f.commit();
  else f.commit_new();
}

}  // namespace sitepatch::cli
