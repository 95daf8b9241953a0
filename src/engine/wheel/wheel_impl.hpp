#pragma once
// What the wheel room's files share: the source wheel as read once.
#include <map>
#include <string>
#include <vector>

#include "sitepatch/engine/wheel.hpp"
#include "sitepatch/site/wheel.hpp"
#include "sitepatch/util/zip.hpp"

namespace sitepatch::engine::detail {

struct SourceWheel {
  std::string path;
  site::WheelName name;
  std::vector<util::ZipMember> members;
  std::string dist_info;   // "foo-1.0.dist-info"
  std::string data_dir;    // "foo-1.0.data", "" when it has none
  std::string metadata, record;
  std::map<std::string, std::string> sources;  // member -> bytes: the .py files that install into site-packages
  std::vector<std::string> ext_suffixes;        // of its compiled modules, each once
  size_t compiled = 0;                          // how many compiled modules it holds
  std::string dist_name, version;               // METADATA's
};

/// Reads the wheel at `path`, named `name` (its file name): its members (each name a safe
/// relative path), its dist-info's METADATA and RECORD, the bytes of its Python sources.
SourceWheel read_wheel(const std::string& path, const std::string& name);

/// The members of the patched wheel, in order (RECORD last), and the provenance kept in
/// its dist-info. `changed`: site-packages path -> new bytes; `edited`: every file an
/// edit is in -> its bytes in the new wheel (the source's where it had the edit already),
/// what verify checks once it is installed.
std::vector<util::ZipEntry> patched_members(const SourceWheel& w, const std::map<std::string, std::string>& changed,
                                            const std::map<std::string, std::string>& edited,
                                            const std::vector<recipe::Recipe>& recipes, const WheelResult& r,
                                            const std::string& sitepatch_version);

/// The file name a recipe is kept under in the dist-info's sitepatch/recipes/.
std::string kept_recipe_name(const std::string& id);

}  // namespace sitepatch::engine::detail
