// Relative imports made absolute (relative_import.hpp).
#include "python/relative_import.hpp"

namespace sitepatch::python {

std::string absolute_from(std::string_view src, TSNode from, const std::string& module, bool package) {
  std::string text(ts::text(src, from));
  if (!ts::is(from, "relative_import")) return text;
  size_t dots = text.find_first_not_of('.');
  std::string rest = dots == std::string::npos ? "" : text.substr(dots);
  size_t up = (dots == std::string::npos ? text.size() : dots) - (package ? 1 : 0);
  std::string pkg = module;
  for (size_t i = 0; i < up; ++i) pkg = pkg.find('.') == std::string::npos ? "" : pkg.substr(0, pkg.rfind('.'));
  if (pkg.empty()) return "";
  return rest.empty() ? pkg : pkg + "." + rest;
}

}  // namespace sitepatch::python
