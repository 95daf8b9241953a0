#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <spdlog/spdlog.h>

int main(int argc, char* argv[]) {
  // The engine's progress notes are for `sitepatch -v`, not for test output.
  spdlog::set_level(spdlog::level::warn);
  return Catch::Session().run(argc, argv);
}
