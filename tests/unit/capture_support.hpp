#pragma once
// What the capture unit tests share: a text with one part swapped, and the check that
// captured edits give the edited text from pip's (and change nothing applied again).
#include <catch2/catch.hpp>

#include <string>

#include "sitepatch/python/capture.hpp"
#include "unit/python_support.hpp"

namespace pytest {

/// `s` with `from` (which must be there) made `to`, at its first place.
inline std::string with(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

/// The captured edits, applied to pip's text, give the edited text (and again, nothing).
inline void check_round_trip_of(const std::string& pip, const std::string& edited,
                                const sitepatch::python::Capture& c) {
  REQUIRE(c.exact);
  CHECK(c.outside.empty());
  Run r = run(pip, c.edits);
  CHECK(r.out == edited);
  CHECK(idempotent(r.out, c.edits));
}

}  // namespace pytest
