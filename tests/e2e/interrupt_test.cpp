// An apply cut off after some files were written: the originals are in the
// history, and the next command finishes the job.
#include <catch2/catch.hpp>

#include "e2e_support.hpp"
#include "support/forwarding_host.hpp"
#include "sitepatch/engine/engine.hpp"
#include "sitepatch/recipe/recipe.hpp"
#include "sitepatch/util/error.hpp"

namespace {

using namespace sitepatch;

// The real machine, except that the write of the package's files dies after the
// first one, as a connection lost mid-write would leave it.
class DyingHost : public testsupport::ForwardingHost {
 public:
  using ForwardingHost::ForwardingHost;
  void write(const std::vector<host::WriteRequest>& files) override {
    bool package = !files.empty() && files.front().path.find("/flashinfer/") != std::string::npos;
    if (!package) return real().write(files);  // the history's own files
    real().write({files.front()});
    throw Error("connection lost");
  }
};

recipe::Recipe bundled_recipe() {
  std::string path = e2e::bundled("flashinfer-dynamo.yaml");
  return recipe::parse(testsupport::slurp(path), path);
}

}  // namespace

TEST_CASE("an apply interrupted after one file is finished by the next command", "[e2e]") {
  e2e::DemoEnv env;
  {
    DyingHost dying(host::make_local_host());
    auto s = engine::Session::open(dying, env.venv.root, "");
    // The message names each file's state and the command that puts things back.
    try {
      engine::apply(s, {bundled_recipe()}, false);
      FAIL("apply did not throw");
    } catch (const Error& e) {
      CHECK(e.code() == Exit::partial);
      CHECK(std::string(e.what()) ==
            "connection lost\nthe apply of flashinfer-dynamo stopped half-way:\n"
            "  flashinfer/jit/cpp_ext.py: patched\n"
            "  flashinfer/fp4_quantization.py: as it was\n"
            "the originals are in the history: sitepatch --venv " + env.venv.root +
            " rollback flashinfer-dynamo puts them back (the next apply finishes it instead)");
    }
  }
  // Half-written: one file patched, the other not.
  CHECK(env.read("flashinfer/jit/cpp_ext.py").find("torch.version.cuda") != std::string::npos);
  CHECK(env.read("flashinfer/fp4_quantization.py") == env.installed.at("fp4_quantization.py"));

  auto r = env.sp({"apply", e2e::bundled("flashinfer-dynamo.yaml")});
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(r.err.find("finished an interrupted apply of flashinfer-dynamo (1 file(s) written)") !=
        std::string::npos);
  CHECK(r.err.find("nothing to do: flashinfer-dynamo already applied") != std::string::npos);
  CHECK(env.sp({"verify"}).status == 0);
  REQUIRE(env.sp({"rollback", "--all"}).status == 0);
  CHECK(env.pristine());
}

TEST_CASE("a write refused before any byte changed leaves no record behind", "[e2e]") {
  e2e::DemoEnv env;
  class RefusingHost : public testsupport::ForwardingHost {
   public:
    using ForwardingHost::ForwardingHost;
    void write(const std::vector<host::WriteRequest>&) override {
      throw Error("flashinfer/jit/cpp_ext.py changed since it was read");
    }
  };
  {
    RefusingHost refusing(host::make_local_host());
    auto s = engine::Session::open(refusing, env.venv.root, "");
    REQUIRE_THROWS_WITH(engine::apply(s, {bundled_recipe()}, false),
                        "flashinfer/jit/cpp_ext.py changed since it was read");
  }
  CHECK(env.pristine());
  CHECK(env.sp({"list"}).out == "no patches applied in " + env.venv.root + "\n");
}
