// Whether a module defines a name, read from its text where the text says it plainly:
// plan asks it of every file of a recipe before it edits them, and a parse of each only
// to learn that would double plan's work on a recipe of hundreds of files.
#include <string_view>

#include "sitepatch/python/module.hpp"

namespace sitepatch::python {

bool plainly_defines(std::string_view text, std::string_view name) {
  if (name.empty()) return false;
  // `def name(`, `async def name(`, `class name(` / `class name:` at column 0, on a line of
  // its own (after a newline, or the text's first). A false yes (such a line inside a
  // string) only skips the re-export's follow: locating the target by tree still decides.
  for (std::string_view head : {"def ", "async def ", "class "}) {
    std::string needle = std::string(head) + std::string(name);
    for (size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + 1)) {
      if (at > 0 && text[at - 1] != '\n') continue;
      size_t after = at + needle.size();
      while (after < text.size() && (text[after] == ' ' || text[after] == '\t')) ++after;
      if (after < text.size() && (text[after] == '(' || (head == "class " && text[after] == ':'))) return true;
    }
  }
  return false;
}

}  // namespace sitepatch::python
