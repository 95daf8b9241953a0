// pathlib first: the founding bug's paths are built from Path.home(), Path.cwd() and a
// Path's own methods, then checked (`.exists()`, `.mkdir()`), which the shipped rules
// flag. Then the few standard functions whose results packages call methods on most
// (strings from os and os.path, re's patterns and matches): without them each such
// call would be one not followed, though the standard library fixes what it is.
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

// Functions (and methods) of the standard library and the class of what they return.
constexpr std::array<std::pair<std::string_view, std::string_view>, 26> kResults = {{
    {"logging.getLogger", "logging.Logger"}, {"logging.Logger.getChild", "logging.Logger"},
    {"os.getcwd", "str"},         {"os.getenv", "str"},            {"os.environ.get", "str"},
    {"os.fspath", "str"},         {"os.path.join", "str"},         {"os.path.abspath", "str"},
    {"os.path.realpath", "str"},  {"os.path.dirname", "str"},      {"os.path.basename", "str"},
    {"os.path.expanduser", "str"}, {"os.path.normpath", "str"},    {"os.environ.copy", "dict"},
    {"re.compile", "re.Pattern"}, {"re.match", "re.Match"},        {"re.search", "re.Match"},
    {"re.fullmatch", "re.Match"}, {"re.Pattern.match", "re.Match"}, {"re.Pattern.search", "re.Match"},
    {"re.Pattern.fullmatch", "re.Match"}, {"re.Pattern.sub", "str"}, {"str.format", "str"},
    {"bytes.decode", "str"},      {"str.encode", "bytes"},         {"str.join", "str"},
}};

// Methods of str and bytes that return the same class.
constexpr std::array<std::string_view, 8> kStringMakers = {"strip", "lstrip", "rstrip", "lower",
                                                           "upper", "replace", "casefold", "title"};

// Methods of a tensor that return a tensor, so `x.sum().item()` is `torch.Tensor.item`
// for an `x: torch.Tensor`. Only ones whose result is always a tensor (not max or sort,
// which may return tuples).
constexpr std::array<std::string_view, 36> kTensorMakers = {
    "sum",  "mean",      "abs",       "float",   "half",    "int",     "long",  "bool",    "to",
    "cuda", "cpu",       "detach",    "clone",   "contiguous", "view", "reshape", "flatten", "squeeze",
    "unsqueeze", "t",    "transpose", "permute", "exp",     "log",     "sqrt",  "add",     "mul",
    "sub",  "div",       "pow",       "neg",     "softmax", "matmul",  "bfloat16", "expand", "repeat"};

bool is_path_class(std::string_view cls) {
  return std::find(kPathClasses.begin(), kPathClasses.end(), cls) != kPathClasses.end();
}

}  // namespace

std::string external_result(const std::string& called) {
  for (const auto& [name, cls] : kResults)
    if (name == called) return std::string(cls);
  size_t dot = called.rfind('.');
  if (dot == std::string::npos) return "";
  std::string_view owner = std::string_view(called).substr(0, dot);
  if ((owner == "str" || owner == "bytes") &&
      std::find(kStringMakers.begin(), kStringMakers.end(), std::string_view(called).substr(dot + 1)) !=
          kStringMakers.end())
    return std::string(owner);
  if (owner == "torch.Tensor")
    return std::find(kTensorMakers.begin(), kTensorMakers.end(), std::string_view(called).substr(dot + 1)) !=
                   kTensorMakers.end()
               ? "torch.Tensor"
               : "";
  if (!is_path_class(owner)) return "";
  std::string_view method = std::string_view(called).substr(dot + 1);
  if (std::find(kPathMakers.begin(), kPathMakers.end(), method) == kPathMakers.end()) return "";
  return "pathlib.Path";
}

bool external_class(const std::string& called) {
  static constexpr std::array<std::string_view, 12> kBuiltins = {
      "list", "dict", "set", "frozenset", "tuple", "str", "bytes", "bytearray", "int", "float", "object", "type"};
  std::string_view last = std::string_view(called).substr(called.rfind('.') + 1);
  if (std::find(kBuiltins.begin(), kBuiltins.end(), last) != kBuiltins.end()) return true;
  return !last.empty() && last[0] >= 'A' && last[0] <= 'Z';
}

bool opaque_class(const std::string& cls) {
  static constexpr std::array<std::string_view, 8> kOpaque = {
      "typing.Any", "object", "types.ModuleType", "typing.Callable", "collections.abc.Callable",
      "typing.Type", "type", "builtins.object"};
  return std::find(kOpaque.begin(), kOpaque.end(), cls) != kOpaque.end();
}

std::string external_attribute(const std::string& cls, const std::string& attr) {
  return is_path_class(cls) && attr == "parent" ? "pathlib.Path" : "";
}

}  // namespace sitepatch::audit::detail
