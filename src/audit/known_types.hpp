#pragma once
// Private to src/audit: what the standard library's functions and classes give, where
// the walk cannot read their code (it is outside the environment) but their documented
// types are fixed: a Path's methods that make a Path, os.path's strings, re's matches.
// Kept small: what is not here is a call not followed, never a guess.
#include <string>

namespace sitepatch::audit::detail {

/// The class calling `called` (an absolute name outside the environment) makes, when
/// the standard library fixes it: "pathlib.Path" for pathlib.Path.home and a Path's
/// resolve(), "str" for os.getcwd and os.path.join, "re.Match" for re.search, the same
/// class for str.strip... "" when not known.
std::string external_result(const std::string& called);

/// Whether calling `called` (outside the environment) makes an instance of it: a
/// builtin class (list, dict, str, ...) or, as PEP 8 names them, a CapWords name.
bool external_class(const std::string& called);

/// Whether an annotation naming `cls` says nothing of the methods its value has
/// (typing.Any, object, types.ModuleType, Callable): a method called on it is not known.
bool opaque_class(const std::string& cls);

/// The class reading attribute `attr` of an instance of outside class `cls` gives
/// ("pathlib.Path" for a Path's `parent`), "" when not known.
std::string external_attribute(const std::string& cls, const std::string& attr);

}  // namespace sitepatch::audit::detail
