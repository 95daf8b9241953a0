#pragma once
// sitepatch refresh ID (quilt's refresh): an applied patch's files as they are now, with
// a hand change on top of its edits, become the recipe's new edits (as small as capture
// writes them), and the history records that new version of the recipe.
#include <functional>
#include <string>
#include <vector>

#include "sitepatch/engine/engine.hpp"
#include "sitepatch/python/capture.hpp"

namespace sitepatch::engine {

struct RefreshedFile {
  std::string rel;
  size_t edits = 0;                            // named edits captured in it
  std::vector<python::OutsideChange> outside;  // changes no edit names: the record keeps them
  bool whole = false;                          // taken whole (replace-module)
};

struct RefreshResult {
  std::string id;
  std::string recipe_path;  // the recipe file the history names ("" when none)
  std::string old_recipe;   // the recipe as the history keeps it
  std::string new_recipe;   // from the files as they are now ("" when nothing changed)
  std::vector<RefreshedFile> files;
  std::vector<FileChange> changed;  // files whose recorded bytes move to today's
  bool written = false;
  std::string commit;
};

/// The recipe of applied patch `id` made again from its files as they are now (from each
/// file's bytes before the patch), checked to give those files back from pip's bytes,
/// and (unless `dry_run`) recorded as the patch's recipe and applied state, with pip's
/// RECORD rows following the bytes. `target`, when given, is asked (under the lock, once
/// the new recipe is checked, before anything is recorded) where the recipe goes: it
/// returns the path the record names from now on ("" keeps the recorded one), or throws
/// and nothing is written. Refuses (nothing written) a patch an upgrade took away, an
/// interrupted one, one whose files another patch also changes. Nothing changed since
/// the apply: `new_recipe` "".
using RecipeTarget = std::function<std::string(const RefreshResult& checked)>;
RefreshResult refresh(Session& s, const std::string& id, bool dry_run, const RecipeTarget& target = {});

}  // namespace sitepatch::engine
