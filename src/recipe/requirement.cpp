// `requires:`: a distribution name, optional [extras] (ignored), then a PEP 440 specifier.
#include <cctype>

#include "sitepatch/recipe/recipe.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::recipe {

namespace {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
}

}  // namespace

std::optional<Requirement> parse_requirement(std::string_view s, std::string* error) {
  auto fail = [&](std::string message) -> std::optional<Requirement> {
    if (error) *error = std::move(message);
    return std::nullopt;
  };
  std::string text = util::trim(s);
  size_t end = 0;
  while (end < text.size() && is_name_char(text[end])) ++end;
  Requirement r;
  r.name = text.substr(0, end);
  if (r.name.empty()) return fail("`" + text + "` does not start with a distribution name");
  // PEP 508: a name starts and ends with a letter or digit.
  if (!std::isalnum(static_cast<unsigned char>(r.name.front())) ||
      !std::isalnum(static_cast<unsigned char>(r.name.back())))
    return fail("distribution name `" + r.name + "` must start and end with a letter or digit");

  std::string rest = util::trim(std::string_view(text).substr(end));
  if (util::starts_with(rest, "[")) {
    size_t close = rest.find(']');
    if (close == std::string::npos) return fail("`[` without `]` in `" + text + "`");
    rest = util::trim(std::string_view(rest).substr(close + 1));
  }
  if (rest.find(';') != std::string::npos)
    return fail("environment markers (`;`) are not supported, in `" + text + "`");
  std::string problem;
  auto clauses = parse_specifier(rest, &problem);
  if (!clauses) return fail(problem);
  r.specifier = rest;
  r.clauses = std::move(*clauses);
  return r;
}

}  // namespace sitepatch::recipe
