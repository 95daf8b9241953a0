// pathlib only: the founding bug's paths are built from Path.home(), Path.cwd() and a
// Path's own methods, then checked (`.exists()`, `.mkdir()`), which the shipped rules flag.
#include "audit/known_types.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace sitepatch::audit::detail {

namespace {

constexpr std::array<std::string_view, 6> kPathClasses = {"pathlib.Path",        "pathlib.PurePath",
                                                          "pathlib.PosixPath",   "pathlib.WindowsPath",
                                                          "pathlib.PurePosixPath", "pathlib.PureWindowsPath"};

// Methods (and class methods) of a path that return a path of the same kind.
constexpr std::array<std::string_view, 13> kPathMakers = {
    "home",     "cwd",       "absolute",  "resolve", "expanduser", "with_name", "with_suffix",
    "with_stem", "joinpath", "relative_to", "readlink", "rename",    "replace"};

bool is_path_class(std::string_view cls) {
  return std::find(kPathClasses.begin(), kPathClasses.end(), cls) != kPathClasses.end();
}

}  // namespace

std::string external_result(const std::string& called) {
  size_t dot = called.rfind('.');
  if (dot == std::string::npos || !is_path_class(std::string_view(called).substr(0, dot))) return "";
  std::string_view method = std::string_view(called).substr(dot + 1);
  if (std::find(kPathMakers.begin(), kPathMakers.end(), method) == kPathMakers.end()) return "";
  return "pathlib.Path";
}

std::string external_attribute(const std::string& cls, const std::string& attr) {
  return is_path_class(cls) && attr == "parent" ? "pathlib.Path" : "";
}

}  // namespace sitepatch::audit::detail
