#pragma once
// Patched wheels: recipes applied to a wheel's files with apply's locator and checks,
// written as a new wheel with a local version, its RECORD rehashed, the recipes and where
// they came from kept in its dist-info (`sitepatch/`), byte-reproducible. And the other
// way: an installed distribution that came from such a wheel ("shipped patched"), read
// from its dist-info for list, verify, apply and sync.
#include <functional>
#include <string>
#include <vector>

#include "sitepatch/engine/engine.hpp"

namespace sitepatch::engine {

struct WheelRequest {
  std::string source;       // the wheel file to patch
  std::string source_name;  // its name, when `source` is where a link to it leads ("": source's)
  std::string python;       // the interpreter that compiles each edited module
  std::string out_dir;      // where the new wheel goes
  std::string version;      // the new version; "" for <version>+sitepatch.<hash of the recipes>
  std::string sitepatch_version;  // kept in the provenance
  bool dry_run = false;
  /// Asked with the new wheel's path once the plan passed, before it is written: the
  /// caller's checks of where it goes (it throws to refuse).
  std::function<void(const std::string&)> before_write;
};

struct WheelResult {
  std::string source_file;  // base name
  std::string source_sha256;
  std::string name;         // the distribution's, as its METADATA says
  std::string version_from, version_to;
  std::string output;       // the new wheel's path (what it would be, in a dry run)
  std::string output_sha256;  // "" in a dry run
  std::string python;       // what compiled the edits: "Python 3.11.7 (/usr/bin/python3.11)"
  bool pure = true;         // no compiled module in the wheel
  std::vector<std::string> notes;  // a compiled wheel, a Python of another tag, ...
  Plan plan;
  bool written = false;
};

/// Plans the recipes on the wheel's files and (unless dry_run) writes the patched wheel.
/// Throws sitepatch::Error when any edit fails (nothing written), naming the edit.
WheelResult build_wheel(host::Host& host, std::vector<recipe::Recipe> recipes, const WheelRequest& req);

/// The label the default version gets: "sitepatch." and 8 hex digits of the recipes'
/// ids and hashes (the same set gives the same label, in any order).
std::string wheel_label(const std::vector<recipe::Recipe>& recipes);

/// A recipe an installed distribution came patched with (a wheel `sitepatch wheel` built).
struct ShippedRecipe {
  std::string id, hash, description;
};
struct ShippedFile {
  std::string rel;     // relative to the site folder
  std::string after;   // sha256 hex of the bytes the wheel shipped
  std::string before;  // sha256 hex of the source wheel's bytes
};
struct ShippedPatch {
  std::string dist, version;  // as installed
  std::string site_dir, dist_info;
  std::string source_wheel, source_sha256, built_by;
  std::vector<ShippedRecipe> recipes;
  std::vector<ShippedFile> files;
};

/// The installed distributions that came patched, each with its recipes (one search of
/// the dist-infos that hold `sitepatch/provenance.json`).
std::vector<ShippedPatch> shipped_patches(Session& s);

/// Each shipped file as it is now: "" when it is a file of the patch's own distribution
/// (its RECORD lists it) holding the bytes the wheel shipped, else what is wrong
/// ("modified", "missing", "foreign": another distribution's, or none's).
std::vector<std::string> shipped_file_states(Session& s, const ShippedPatch& p);

/// Whether `p` is believed: it names files, and each is as shipped_file_states wants it.
bool shipped_intact(Session& s, const ShippedPatch& p);

/// The shipped patches as verify's statuses (`PatchStatus::shipped` set), each file
/// applied when it holds the shipped bytes, else modified or missing; `ids` narrows them.
std::vector<PatchStatus> shipped_statuses(Session& s, const std::vector<std::string>& ids);

}  // namespace sitepatch::engine
