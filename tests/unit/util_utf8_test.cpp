// UTF-8 validity as Python and JSON need it: the first byte that is not UTF-8.
#include <catch2/catch.hpp>

#include "sitepatch/util/utf8.hpp"

using sitepatch::util::first_invalid_utf8;

TEST_CASE("valid UTF-8 of every length passes", "[util]") {
  CHECK_FALSE(first_invalid_utf8(""));
  CHECK_FALSE(first_invalid_utf8("plain ascii\n"));
  CHECK_FALSE(first_invalid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x90\x8D \xF4\x8F\xBF\xBF"));
}

TEST_CASE("the first byte of a bad or cut sequence is named", "[util]") {
  CHECK(first_invalid_utf8("ab\xE9") == 2u);               // latin-1
  CHECK(first_invalid_utf8("a\xC3") == 1u);                // cut short at the end
  CHECK(first_invalid_utf8("a\xE2\x82z") == 1u);           // cut short before ASCII
  CHECK(first_invalid_utf8("\x80") == 0u);                 // a lone continuation byte
  CHECK(first_invalid_utf8("\xC1\xBF") == 0u);             // overlong 2-byte
  CHECK(first_invalid_utf8("\xE0\x9F\xBF") == 0u);         // overlong 3-byte
  CHECK(first_invalid_utf8("\xED\xA0\x80") == 0u);         // a surrogate
  CHECK(first_invalid_utf8("\xF4\x90\x80\x80") == 0u);     // above U+10FFFF
  CHECK(first_invalid_utf8("\xF5\x80\x80\x80") == 0u);
}
