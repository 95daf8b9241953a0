// src/engine/capture/: hand edits back into recipes: edit (pristine.cpp: pip's bytes into
// the history, a copy to edit), then capture: which files changed (changed_files.cpp),
// pip's bytes of them (originals.cpp), the recipe and its applied patch (here);
// capture_impl.hpp is what they share.
//
// capture: hand edits of a distribution -> a recipe of named edits, recorded as an
// applied patch whose originals are pip's bytes. Steps: what changed (RECORD), pip's
// bytes of it (checked against RECORD), the named edits per file (python::capture, which
// checks them by applying them), the recipe (parsed back), a plan of it against pip's
// bytes (an overlay: nothing read from disk is trusted to be pip's), then apply's own
// writing steps with the edited bytes as the result.
#include "sitepatch/engine/capture.hpp"

#include <ctime>
#include <filesystem>

#include "engine/capture/capture_impl.hpp"
#include "engine/internal.hpp"
#include "engine/records/history_access.hpp"
#include "sitepatch/host/overlay.hpp"
#include "sitepatch/recipe/version.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {
namespace {

using detail::DistFile;

std::string today() {
  std::time_t t = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

// The recipe: a header saying where it came from and what it leaves out, then the edits.
std::string recipe_text(const CaptureResult& r, const std::vector<recipe::Edit>& edits, bool from_copy) {
  // Names and versions come from files others may write: every comment goes through the
  // recipe writer's escaping, every value through its quoting (issue 48).
  auto comment = [](std::string_view s) { return recipe::yaml_comment(s); };
  std::string out = "# Captured by " + comment("`sitepatch capture " + r.dist + "`") + " on " + today() +
                    " from hand edits of " + comment(r.dist + " " + r.version) + (from_copy ? " (made in a copy)" : "") +
                    ".\n";
  std::vector<std::string> left;
  for (auto& f : r.files)
    for (auto& c : f.outside)
      left.push_back("#   " + comment(f.rel) + " " +
                     (c.new_first ? "lines " + std::to_string(c.new_first) + "-" + std::to_string(c.new_last)
                                  : "(removed) lines " + std::to_string(c.old_first) + "-" + std::to_string(c.old_last) +
                                        " of pip's"));
  if (!left.empty())
    out += "# Left out (outside any definition it can name; the edited file keeps them, a fresh install\n"
           "# will not get them from this recipe):\n" + util::join(left, "\n") + "\n";
  std::vector<std::string> moved;
  for (auto& f : r.files)
    for (auto& m : f.moved)
      moved.push_back("#   " + comment(f.rel + ": " + m.import) +
                      (m.edited_line == m.recipe_line
                           ? " (the blank lines after it differ)"
                           : " (line " + std::to_string(m.edited_line) + " as edited, line " +
                                 std::to_string(m.recipe_line) + " from this recipe)"));
  if (!moved.empty())
    out += "# Imports placed by hand beside others: this recipe's ensure-import puts them after the\n"
           "# module's imports (the edited files, recorded as they are, keep yours):\n" + util::join(moved, "\n") + "\n";
  out += "id: " + recipe::yaml_scalar(r.id) + "\n";
  out += "description: " + recipe::yaml_scalar("Hand edits of " + r.dist + " " + r.version + ", captured") + "\n";
  // A whole module's text fits only the version it was taken from; named edits, the minor.
  bool whole = std::any_of(edits.begin(), edits.end(), [](auto& e) { return e.action == recipe::Action::replace_module; });
  // A version that is no PEP 440 one is named in a comment, never made a requirement.
  if (recipe::Version::parse(r.version))
    out += "requires: " +
           recipe::yaml_scalar(whole ? r.dist + "==" + r.version : recipe::up_to_next_minor(r.dist, r.version)) + "\n";
  else
    out += "# no requires: " + comment(r.version) + " is no PEP 440 version\n";
  out += "edits:\n";
  for (auto& e : edits) out += recipe::edit_yaml(e);
  return out;
}

// Patched files are their patch's: changes around its edits are adopted, not captured.
void drop_patched(std::vector<DistFile>& files, const std::vector<store::PatchRecord>& existing,
                  std::vector<std::string>& left_out) {
  std::vector<DistFile> keep;
  for (auto& f : files) {
    std::string by;
    for (auto& r : existing)
      for (auto& rf : r.files)
        if (rf.site_dir + "/" + rf.rel == f.path) by = r.id;
    if (by.empty()) keep.push_back(std::move(f));
    else left_out.push_back(f.rel + ": patched by " + by + "; `sitepatch adopt " + by + "` records changes around its edits");
  }
  files = std::move(keep);
}

// The named edits of every changed file, in file order; `res.files` says what each holds.
std::vector<recipe::Edit> named_edits(CaptureResult& res, const std::vector<DistFile>& files,
                                      const std::map<std::string, detail::Original>& originals, bool whole_file) {
  std::vector<recipe::Edit> edits;
  for (auto& f : files) {
    const auto& orig = originals.at(f.rel);
    CapturedFile cf;
    cf.original = orig.from;
    auto mine = detail::file_edits(orig.text, f.text, f.rel, whole_file, cf);
    edits.insert(edits.end(), std::make_move_iterator(mine.begin()), std::make_move_iterator(mine.end()));
    res.files.push_back(std::move(cf));
  }
  return edits;
}

// An edited file that is a link leading out of its site folder: no recipe can edit it
// (a write there is refused, as every write outside site-packages is), so capture says
// what it is before planning rather than report the refused plan as its own bug.
void refuse_links_outside(host::Host& host, const std::vector<DistFile>& files) {
  std::vector<std::string> asked;
  for (auto& f : files) {
    asked.push_back(f.path);
    asked.push_back(f.path.substr(0, f.path.size() - f.rel.size() - 1));  // its site folder
  }
  auto real = host.realpath(asked);
  for (size_t i = 0; i < files.size(); ++i) {
    auto& file = real[2 * i];
    auto& site = real[2 * i + 1];
    if (!file || !site || util::starts_with(*file, *site + "/")) continue;
    throw Error(files[i].rel + " is a symbolic link to " + util::printable(*file) +
                ", outside site-packages: sitepatch patches only files inside it, so no recipe could make this edit; "
                "put the file itself in place of the link, or capture where " + util::printable(*file) +
                " is installed");
  }
}

// The recipe planned against pip's bytes; each file's result must be its edited bytes
// where the edits reproduce them. The plan then carries the edited bytes as the result.
Plan plan_on_originals(Session& s, const recipe::Recipe& rec, const std::vector<DistFile>& files,
                       const std::map<std::string, detail::Original>& originals, const CaptureResult& res,
                       const std::vector<store::PatchRecord>& existing, bool in_place) {
  refuse_links_outside(s.host, files);
  std::map<std::string, std::string> texts;
  for (auto& f : files) texts[f.path] = originals.at(f.rel).text;
  auto view = host::overlay_host(s.host, texts);
  Session seen(*view, s.env, s.state_dir);
  Plan p = detail::plan_against(seen, {rec}, existing);
  if (!p.ok()) {
    std::vector<std::string> why = p.problems;
    for (auto& e : p.edits)
      if (e.state == EditState::failed) why.push_back(e.where + ": " + e.message);
    throw Error("the captured recipe does not apply to pip's bytes (a sitepatch bug; please report it): " +
                util::join(why, "; "));
  }
  for (auto& fc : p.files) {
    auto f = std::find_if(files.begin(), files.end(), [&](auto& x) { return x.path == fc.path; });
    if (f == files.end()) throw Error("the captured recipe changes " + fc.rel + ", which was not edited (a sitepatch bug)");
    auto cf = std::find_if(res.files.begin(), res.files.end(), [&](auto& x) { return x.rel == f->rel; });
    if (cf == res.files.end()) throw Error("the captured recipe changes " + fc.rel + ", which it did not capture (a sitepatch bug)");
    if (cf->outside.empty() && cf->moved.empty() && fc.new_text != f->text)
      throw Error("the captured recipe does not give " + fc.rel + "'s edited bytes back (a sitepatch bug)");
    // The record's result is the file as edited, outside changes included: verify is green
    // and rollback gives pip's bytes back.
    fc.new_text = f->text;
    fc.steps = {{rec.id, f->text}};
    fc.diff = store::unified_diff(fc.old_text, fc.new_text, fc.rel);
    if (in_place) fc.old_sha = util::sha256_hex(f->text);  // on disk now; checked again as it is rewritten
  }
  return p;
}

}  // namespace

std::vector<recipe::Edit> detail::file_edits(const std::string& before, const std::string& now, const std::string& rel,
                                             bool whole_file, CapturedFile& cf) {
  cf.rel = rel;
  auto c = python::capture(before, now, rel, whole_file);
  if (!whole_file && c.edits.empty() && !c.outside.empty()) {
    // Nothing changed here has a name: left out, the change would be in neither the
    // recipe nor the record, and a rollback would not give pip's bytes back. Whole.
    c = python::capture(before, now, rel, true);
    cf.whole = true;
  }
  cf.outside = c.outside;
  cf.moved = c.moved;
  cf.problem = c.problem;
  cf.edits = c.edits.size();
  std::string module = module_of(rel);
  for (auto& e : c.edits) {
    if (module.empty()) e.file = rel;
    else e.module = module;
  }
  return std::move(c.edits);
}

CaptureResult capture(Session& s, const CaptureOptions& o) {
  CaptureResult res;
  const site::Distribution& d = detail::distribution_named(s, o.dist);
  res.dist = d.name;
  res.version = d.version;
  res.id = o.id.empty() ? site::normalize_name(d.name) + "-local" : o.id;
  if (!recipe::valid_id(res.id))
    throw Error("--id " + res.id + ": a recipe id is lower-case letters, digits, '.', '_' and '-'", Exit::usage);

  std::unique_ptr<host::Lock> lock =
      o.dry_run ? detail::read_lock(s) : s.host.lock(detail::lock_path(s), s.lock_timeout_ms);
  std::vector<store::PatchRecord> existing;
  std::unique_ptr<detail::HistoryAccess> history;
  if (o.dry_run) {
    history = detail::HistoryAccess::open(s, false);
    if (history) existing = history->patches();
  } else {
    history = detail::open_cleaned(s, *lock, existing, res.applied.recovered, &res.applied.recovered_files);
  }

  for (auto& r : existing)
    if (r.id == res.id)
      throw Error("a patch named " + res.id + " is already applied (" + detail::fix_command(s, "list") +
                  "): give --id with a new name for this capture");

  // 1. What changed, and pip's bytes of it.
  std::map<std::string, std::string> installed;
  detail::Changes ch = o.from.empty() ? detail::changed_in_place(s, d, o.hash_all)
                                      : detail::changed_in_copy(s, d, o.from, installed);
  res.checked = ch.checked;
  res.hashed = ch.hashed;
  res.left_out = ch.left_out;
  drop_patched(ch.python, existing, res.left_out);
  if (ch.python.empty()) return res;
  std::map<std::string, detail::Original> originals;
  if (o.from.empty()) {
    originals = detail::find_originals(s, history.get(), d, ch.python, o.original);
  } else {
    for (auto& f : ch.python) originals[f.rel] = {installed.at(f.rel), "the installed file"};
  }

  // 2. The named edits, the recipe, and its plan against pip's bytes.
  auto edits = named_edits(res, ch.python, originals, o.whole_file);
  if (edits.empty()) return res;  // every change is outside a definition: nothing to record
  res.recipe_text = recipe_text(res, edits, !o.from.empty());
  // What it says must read back as exactly these edits (a file or version name could
  // carry a line break), before the plan against pip's bytes checks what they make.
  recipe::check_written(res.recipe_text, res.id, edits, "the recipe capture writes");
  recipe::Recipe rec = recipe::parse(res.recipe_text, o.recipe_path.empty() ? "(captured)" : o.recipe_path);
  std::error_code ec;
  if (!o.recipe_path.empty() && o.recipe_path != "-")
    rec.origin = std::filesystem::absolute(o.recipe_path, ec).lexically_normal().string();
  res.applied.plan = plan_on_originals(s, rec, ch.python, originals, res, existing, o.from.empty());
  detail::refuse_shared(s, res.applied.plan);  // the dry run refuses what the real one would
  if (o.dry_run) return res;

  // 3. Recorded as applied (with --from, written as apply writes).
  if (!history) history = detail::HistoryAccess::open(s, true, true);
  detail::write_plan(s, res.applied, existing, *history);
  return res;
}

}  // namespace sitepatch::engine
