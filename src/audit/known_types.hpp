#pragma once
// Private to src/audit: what values of the standard library's classes give, where the
// walk cannot read their code (it is outside the environment) but their documented
// types are fixed: a Path's methods that make a Path. Kept small: each entry is a
// chain the walk could otherwise not follow to a rule (`pathlib.Path.*`).
#include <string>

namespace sitepatch::audit::detail {

/// The class calling `called` (an absolute name outside the environment) makes, when
/// the standard library fixes it: "pathlib.Path" for pathlib.Path.home and a Path's
/// resolve(), parent-like methods... "" when not known.
std::string external_result(const std::string& called);

/// The class reading attribute `attr` of an instance of outside class `cls` gives
/// ("pathlib.Path" for a Path's `parent`), "" when not known.
std::string external_attribute(const std::string& cls, const std::string& attr);

}  // namespace sitepatch::audit::detail
