// An apply cut off after some files were written: the originals are in the
// history, and the next command finishes the job.
#include <catch2/catch.hpp>

#include "e2e_support.hpp"
#include "sitepatch/engine/engine.hpp"
#include "sitepatch/recipe/recipe.hpp"
#include "sitepatch/util/error.hpp"

namespace {

using namespace sitepatch;

// The real machine, except that write() dies after the first file, as a killed
// process or a full disk would leave it.
class DyingHost : public host::Host {
 public:
  explicit DyingHost(std::unique_ptr<host::Host> real) : real_(std::move(real)) {}
  std::string name() const override { return real_->name(); }
  site::Environment probe(const std::string& v) override { return real_->probe(v); }
  std::vector<host::FileData> read(const std::vector<std::string>& p) override { return real_->read(p); }
  bool local() const override { return real_->local(); }
  std::vector<host::DirEntry> list(const std::string& d) override { return real_->list(d); }
  std::optional<std::map<std::string, std::string>> snapshot(const std::string& d,
                                                             const std::vector<std::string>& s) override {
    return real_->snapshot(d, s);
  }
  std::vector<std::optional<std::string>> realpath(const std::vector<std::string>& p) override {
    return real_->realpath(p);
  }
  void write(const std::vector<host::WriteRequest>& files) override {
    real_->write({files.front()});
    throw Error("connection lost");
  }
  void remove(const std::vector<std::string>& p) override { real_->remove(p); }
  std::vector<host::CompileResult> compile(const std::vector<host::CompileRequest>& s) override {
    return real_->compile(s);
  }
  std::unique_ptr<host::Lock> lock(const std::string& p, int t) override { return real_->lock(p, t); }

 private:
  std::unique_ptr<host::Host> real_;
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
    REQUIRE_THROWS_WITH(engine::apply(s, {bundled_recipe()}, false),
                        Catch::Contains("connection lost") &&
                            Catch::Contains("the next sitepatch command on this environment finishes the apply"));
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
  class RefusingHost : public DyingHost {
   public:
    using DyingHost::DyingHost;
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
