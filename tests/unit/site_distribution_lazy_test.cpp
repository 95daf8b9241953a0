#include <catch2/catch.hpp>

#include "sitepatch/host/distribution_index.hpp"
#include "sitepatch/host/host.hpp"
#include "sitepatch/site/distribution.hpp"
#include "sitepatch/util/strings.hpp"
#include "support/fixture.hpp"
#include "support/forwarding_host.hpp"

using namespace sitepatch::site;
using sitepatch::host::DistributionIndex;
using sitepatch::host::load_distributions;

namespace {

// Counts what crosses the seam: whole files read, and bytes of the rows read_lines kept.
struct CountingHost : testsupport::ForwardingHost {
  using ForwardingHost::ForwardingHost;
  std::vector<std::string> whole;
  size_t row_bytes = 0;
  std::vector<sitepatch::host::FileData> read(const std::vector<std::string>& p) override {
    whole.insert(whole.end(), p.begin(), p.end());
    return ForwardingHost::read(p);
  }
  std::vector<sitepatch::host::FileData> read_lines(const std::vector<std::string>& p,
                                                    const std::vector<std::string>& needles) override {
    auto files = ForwardingHost::read_lines(p, needles);
    for (auto& f : files) row_bytes += f.content.size();
    return files;
  }
  bool read_whole(const std::string& suffix) const {
    for (auto& w : whole)
      if (sitepatch::util::ends_with(w, suffix)) return true;
    return false;
  }
};

void dist_info(const std::string& site, const std::string& name, const std::string& record) {
  testsupport::spit(site + "/" + name + "-1.0.dist-info/METADATA", "Name: " + name + "\nVersion: 1.0\n");
  testsupport::spit(site + "/" + name + "-1.0.dist-info/RECORD", record);
}

}  // namespace

TEST_CASE("lines_holding keeps each line holding a needle once, in file order", "[host]") {
  using sitepatch::host::lines_holding;
  CHECK(lines_holding("a/x.py,h,1\nb/y.py,h,2\nc/x.py,h,3", {"x.py"}) == "a/x.py,h,1\nc/x.py,h,3\n");
  CHECK(lines_holding("a/x.py\nb/y.py\n", {"y.py", "x.py", "a/"}) == "a/x.py\nb/y.py\n");
  CHECK(lines_holding("abc\n", {"zz", ""}).empty());
}

TEST_CASE("The distribution index reads only the rows and metadata a question needs", "[site]") {
  testsupport::TempDir tmp;
  std::string site = tmp.path + "/site";
  std::string big;
  for (int i = 0; i < 2000; ++i) big += "torch/ops/op_" + std::to_string(i) + ".py,sha256=x,1\n";
  dist_info(site, "torch", big + "torch/__init__.py,,\n");
  dist_info(site, "aaa_first", "shared/util.py,,\n");
  dist_info(site, "flashinfer_python", "flashinfer/jit/cpp_ext.py,,\nflashinfer/__init__.py,,\n");
  dist_info(site, "zzz_second", "shared/util.py,,\n");
  CountingHost host(sitepatch::host::make_local_host());
  DistributionIndex index = load_distributions(host, {site});
  CHECK(host.whole.empty());  // listing reads nothing

  // A file's owner: the rows naming its base name, then the owner's metadata only.
  const Distribution* fi = index.owner(site, "flashinfer/jit/cpp_ext.py");
  REQUIRE(fi);
  CHECK(fi->name == "flashinfer_python");
  CHECK(fi->record.empty());  // the rest of its RECORD only when asked
  CHECK(index.files(*fi).size() == 2);
  CHECK(host.read_whole("flashinfer_python-1.0.dist-info/METADATA"));
  CHECK_FALSE(host.read_whole("torch-1.0.dist-info/RECORD"));
  CHECK_FALSE(host.read_whole("torch-1.0.dist-info/METADATA"));
  CHECK(host.row_bytes < 100);

  // The first claimant in folder order wins, as when every RECORD was read.
  REQUIRE(index.owner(site, "shared/util.py"));
  CHECK(index.owner(site, "shared/util.py")->name == "aaa_first");
  CHECK(index.owner(site, "flashinfer/missing.py") == nullptr);

  // A name: only the dist-info whose folder encodes it.
  host.whole.clear();
  REQUIRE(index.find("Flashinfer-Python"));
  REQUIRE(index.find("torch"));
  CHECK(index.files(*index.find("torch")).size() == 2001);
  CHECK_FALSE(host.read_whole("zzz_second-1.0.dist-info/METADATA"));
  CHECK(index.find("nope") == nullptr);  // reads the rest, to be sure
  CHECK(index.all().size() == 4);
  CHECK(index.owner(site, "torch/ops/op_7.py") == index.find("torch"));
}
