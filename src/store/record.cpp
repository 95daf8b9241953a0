// patch.json: the applied patch's record, written by commit() and read by patches().
#include "store/record.hpp"

#include <nlohmann/json.hpp>

#include "sitepatch/util/error.hpp"

namespace sitepatch::store::detail {

namespace {
// Bumped when a field changes meaning, so an older sitepatch can refuse a newer record.
constexpr int kFormat = 3;  // 2: per-edit records; 3: replace_indent (before it: absolute)
}  // namespace

std::string record_to_json(const PatchRecord& r, const std::vector<FileBlobs>& blobs) {
  nlohmann::ordered_json j;
  j["format"] = kFormat;
  j["id"] = r.id;
  j["description"] = r.description;
  j["recipe_path"] = r.recipe_path;
  j["recipe_hash"] = r.recipe_hash;
  j["replace_indent"] = r.replace_indent;
  j["state"] = r.state;
  j["applied_at"] = r.applied_at;
  j["files"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < r.files.size(); ++i) {
    const FileRecord& f = r.files[i];
    j["files"].push_back({{"rel", f.rel},
                          {"site_dir", f.site_dir},
                          {"dist", f.dist},
                          {"version", f.version},
                          {"before", blobs.at(i).before},
                          {"after", blobs.at(i).after}});
    // Optional: an older sitepatch ignores it, and a record without it is checked again.
    if (!f.checked.empty()) j["files"].back()["checked"] = f.checked;
  }
  j["edits"] = nlohmann::ordered_json::array();
  for (const EditRecord& e : r.edits)
    j["edits"].push_back({{"where", e.where},
                          {"file", e.rel},
                          {"module", e.module},
                          {"dist", e.dist},
                          {"version", e.version},
                          {"before_sha256", e.before_sha},
                          {"after_sha256", e.after_sha},
                          {"fingerprint", e.fingerprint},
                          {"original", e.original}});
  // Indented so `git log -p` shows a readable, line-wise diff of the record.
  return j.dump(2) + "\n";
}

PatchRecord record_from_json(const std::string& text, const std::string& where,
                             std::vector<FileBlobs>& blobs) {
  try {
    auto j = nlohmann::json::parse(text);
    if (j.value("format", 1) > kFormat)
      throw Error(where + ": record format " + std::to_string(j.value("format", 1)) +
                  " is newer than this sitepatch understands");
    PatchRecord r;
    r.id = j.at("id").get<std::string>();
    r.description = j.value("description", "");
    r.recipe_path = j.value("recipe_path", "");
    r.recipe_hash = j.value("recipe_hash", "");
    r.replace_indent = j.value("format", 1) < 3 ? "absolute" : j.value("replace_indent", "relative");
    r.state = j.value("state", "");
    r.applied_at = j.value("applied_at", int64_t{0});
    blobs.clear();
    for (const auto& f : j.value("files", nlohmann::json::array())) {
      FileRecord fr;
      fr.rel = f.at("rel").get<std::string>();
      fr.site_dir = f.value("site_dir", "");
      fr.dist = f.value("dist", "");
      fr.version = f.value("version", "");
      fr.checked = f.value("checked", "");
      blobs.push_back({f.value("before", ""), f.value("after", "")});
      r.files.push_back(std::move(fr));
    }
    for (const auto& e : j.value("edits", nlohmann::json::array())) {
      EditRecord er;
      er.where = e.value("where", "");
      er.rel = e.value("file", "");
      er.module = e.value("module", "");
      er.dist = e.value("dist", "");
      er.version = e.value("version", "");
      er.before_sha = e.value("before_sha256", "");
      er.after_sha = e.value("after_sha256", "");
      er.fingerprint = e.value("fingerprint", "");
      er.original = e.value("original", "");
      r.edits.push_back(std::move(er));
    }
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + ": not a valid patch record: " + e.what());
  }
}

}  // namespace sitepatch::store::detail
