#pragma once
// Private to the store: patches/<id>/patch.json <-> PatchRecord (without file bodies,
// which live in patches/<id>/before/ and after/ and are named here by blob id).
#include "sitepatch/store/history.hpp"

#include <string>
#include <vector>

namespace sitepatch::store::detail {

/// The blob ids of one file's before/after bodies, in the record's file order.
struct FileBlobs {
  std::string before;  // hex oid
  std::string after;   // hex oid
};

/// patch.json text: every PatchRecord field except bodies and recipe_text.
std::string record_to_json(const PatchRecord& record, const std::vector<FileBlobs>& blobs);

/// Parses patch.json; bodies and recipe_text are left empty, blob ids go to `blobs`.
/// Throws sitepatch::Error naming `where` when the text is not a record.
PatchRecord record_from_json(const std::string& text, const std::string& where,
                             std::vector<FileBlobs>& blobs);

}  // namespace sitepatch::store::detail
