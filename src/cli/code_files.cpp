// Rules and hints files are code: `rules --calibrate` runs a rule's `probe:` and `explain
// --run` a hint's body, as whoever runs sitepatch (root, on a shared server). So such a
// file is read only where nobody but the caller and root could have written or swapped it,
// as an environment's Python is run only then (issue 48).
#include <sys/stat.h>

#include <filesystem>

#include "commands.hpp"
#include "sitepatch/util/safe_path.hpp"

namespace sitepatch::cli {

void check_code_file(const std::string& path, const std::string& kind, const std::string& runs) {
  // A pipe (`<(cmd)`, standard input) carries what the caller's own command wrote.
  struct stat st {};
  if (path == "-" || (::stat(path.c_str(), &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)))) return;
  std::error_code ec;
  if (auto why = util::unsafe_path(std::filesystem::absolute(path, ec).lexically_normal().string()))
    throw Error("refusing to read the " + kind + " file " + path + ": " + *why +
                ", who could make it run their code as you (" + runs + "); keep it where only you can write");
}

}  // namespace sitepatch::cli
