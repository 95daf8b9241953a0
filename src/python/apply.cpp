// Module::apply: locate every edit on the one parse, turn each into splices against the
// original bytes, refuse overlaps, then write the new source in one pass.
#include <algorithm>
#include <iterator>
#include <map>

#include "sitepatch/util/error.hpp"

#include "python/imports.hpp"
#include "python/module_impl.hpp"
#include "python/plan.hpp"

namespace sitepatch::python {
namespace {

using recipe::Action;
using recipe::TargetKind;

// An accepted splice, with what it needs for ordering and conflict messages.
struct Placed {
  Splice s;
  size_t edit;  // index into the edits
  size_t seq;   // global order of acceptance
};

// The accepted splices by position, to find the one a new splice overlaps in log time
// (a scan of every accepted splice per edit made a file's edits quadratic). Replaced
// ranges never overlap one another, so sorted by start they are sorted by end too.
// Imports overlap nothing; two insertions at one place keep recipe order; an insertion
// at either end of a replaced range touches none of its bytes.
class Occupied {
 public:
  /// The acceptance number (seq) of the earliest accepted splice `s` overlaps, or npos.
  size_t clash(const Splice& s) const {
    size_t best = npos;
    if (s.import) return best;
    if (s.begin == s.end) {
      auto it = ranges_.lower_bound(s.begin);  // first range starting at or after the point
      if (it != ranges_.begin() && std::prev(it)->second.end > s.begin) best = std::prev(it)->second.seq;
      return best;
    }
    // Ranges starting before our end that end after our start.
    for (auto it = ranges_.lower_bound(s.end); it != ranges_.begin();) {
      --it;
      if (it->second.end <= s.begin) break;
      best = std::min(best, it->second.seq);
    }
    // Insertions strictly inside.
    for (auto it = points_.upper_bound(s.begin); it != points_.end() && it->first < s.end; ++it)
      best = std::min(best, it->second);
    return best;
  }
  void add(const Splice& s, size_t seq) {
    if (s.import) return;
    if (s.begin == s.end) points_.emplace(s.begin, seq);
    else ranges_[s.begin] = {s.end, seq};
  }
  static constexpr size_t npos = size_t(-1);

 private:
  struct Range {
    size_t end, seq;
  };
  std::map<size_t, Range> ranges_;        // by start
  std::multimap<size_t, size_t> points_;  // insertion offset -> seq
};

bool kind_fits(const recipe::Edit& e, EditResult& r) {
  bool variable = e.kind == TargetKind::variable;
  switch (e.action) {
    case Action::set_value:
      if (!variable)
        return fail(r, Failure::invalid, e.target + " is a " + std::string(recipe::kind_name(e.kind)) +
                                             ": set-value needs a variable");
      return true;
    case Action::replace:
    case Action::insert_after:
    case Action::replace_module:
    case Action::none:
      return true;
    default:
      if (variable)
        return fail(r, Failure::invalid, e.target + " is a variable: " + std::string(recipe::action_name(e.action)) +
                                             " needs a function or class");
      return true;
  }
}

bool run_action(const Context& cx, const Def& d, const recipe::Edit& e, ActionOut& out, EditResult& r) {
  switch (e.action) {
    case Action::replace_body: return replace_body(cx, d, e, out, r);
    case Action::prepend_body: return prepend_body(cx, d, e, out, r);
    case Action::add_decorator: return add_decorator(cx, d, e, out, r);
    case Action::remove_decorator: return remove_decorator(cx, d, e, out, r);
    case Action::replace_function: return replace_function(cx, d, e, out, r);
    case Action::replace: return replace_text(cx, d, e, out, r);
    case Action::set_value: return set_value(cx, d, e, out, r);
    case Action::insert_after: return insert_after(cx, d, e, out, r);
    case Action::insert_before: return insert_before(cx, d, e, out, r);
    case Action::register_custom_op: return register_custom_op(cx, d, e, out, r);
    case Action::replace_module: return true;  // handled before any lookup
    case Action::none: return true;
  }
  return true;
}

// The first character of the splices' text the module's encoding cannot hold, or "".
std::string unencodable(const std::vector<Splice>& splices, const encoding::Codec& codec) {
  if (codec.iconv.empty()) return "";
  for (const auto& s : splices)
    if (std::string bad = encoding::unencodable(s.text, codec); !bad.empty()) return bad;
  return "";
}

std::string target_name(const recipe::Edit& e) {
  if (e.target.empty() && e.action == Action::replace) return "the module";
  return e.target.empty() ? "ensure-import " + e.ensure_import : e.target;
}

}  // namespace

std::string Module::apply(const std::vector<const recipe::Edit*>& edits,
                          std::vector<EditResult>& results,
                          std::vector<TextChange>* changes,
                          const std::set<std::string>* others) const {
  std::string_view src = impl_->text();
  TSNode root = impl_->tree->root();
  Context cx{src, root, *impl_->defs, detect_style(root, src), others};
  std::unique_ptr<ImportSite> site;  // found on the first ensure-import
  std::vector<Binding> pending;      // bindings added by accepted edits
  std::vector<Placed> placed;
  Occupied occupied;

  results.assign(edits.size(), EditResult{});
  for (size_t i = 0; i < edits.size(); ++i) {
    const recipe::Edit& e = *edits[i];
    EditResult& r = results[i];
    if (e.action == Action::none && text::strip(e.ensure_import).empty()) {
      fail(r, Failure::invalid, "nothing to do: no action and no ensure-import");
      continue;
    }

    // The action part.
    ActionOut out;
    out.already = true;
    if (e.action == Action::replace_module) {
      // The whole text, as given: nothing is located, every other edit of the file overlaps it.
      std::string code = text::with_eol(text::to_lf(e.code), cx.style.eol);
      out.already = src == code;
      if (!out.already) out.splices.push_back({0, src.size(), code});
      r.line = 1;
    } else if (e.action == Action::replace && e.target.empty()) {
      out.already = false;
      if (!replace_in_module(cx, e, out, r)) continue;
    } else if (e.action != Action::none) {
      out.already = false;
      if (!kind_fits(e, r)) continue;
      const Def* d = locate(cx, e, r);
      if (!d || !run_action(cx, *d, e, out, r)) continue;
    }

    // The ensure-import part: the names the module (or an earlier edit) does not bind yet.
    bool import_already = true;
    std::vector<Binding> adds;
    if (!text::strip(e.ensure_import).empty()) {
      ImportRequest req;
      std::string error;
      if (!parse_import(e.ensure_import, req, error)) {
        fail(r, Failure::invalid, error);
        continue;
      }
      if (!site) site = std::make_unique<ImportSite>(import_site(cx));
      std::vector<Binding> missing;
      for (const auto& b : req.bindings) {
        if (bound_by(b, site->bound)) continue;
        import_already = false;
        if (!bound_by(b, pending)) missing.push_back(b);
      }
      if (e.action == Action::none) {
        r.line = req.future ? site->future_line : site->at_line;
        for (const auto& b : req.bindings)
          for (const auto& h : site->bound)
            if (bound_by(b, {h})) r.line = h.line;
      }
      if (!missing.empty()) {
        size_t at = req.future ? site->future_at : site->at;
        std::string line = render_import(req, missing) + "\n";
        if (at == src.size() && !src.empty() && src.back() != '\n') line = "\n" + line;
        Splice s{at, at, text::with_eol(line, cx.style.eol), true};
        out.splices.push_back(std::move(s));
        adds = std::move(missing);
      }
    }

    // New code the module's encoding cannot hold fails the edit: never a file Python
    // cannot read.
    if (std::string bad = unencodable(out.splices, impl_->codec); !bad.empty()) {
      fail(r, Failure::invalid, (impl_->name.empty() ? std::string("the module") : impl_->name) + " is " +
                                    impl_->codec.name + " (its coding line), which cannot hold " + bad +
                                    " of the new code");
      continue;
    }

    // Overlaps with an edit accepted earlier fail this one.
    const Placed* clash = nullptr;
    for (const auto& mine : out.splices)
      if (size_t seq = occupied.clash(mine); seq != Occupied::npos) {
        clash = &placed[seq];
        break;
      }
    if (clash) {
      fail(r, Failure::conflict, "overlaps the edit of " + target_name(*edits[clash->edit]) +
                                     " (" + std::string(recipe::action_name(edits[clash->edit]->action)) + ")");
      continue;
    }

    r.outcome = out.already && import_already ? Outcome::already_applied : Outcome::will_apply;
    if (r.outcome == Outcome::already_applied) r.message = "already applied";
    for (auto& s : out.splices) {
      occupied.add(s, placed.size());
      placed.push_back({std::move(s), i, placed.size()});
    }
    pending.insert(pending.end(), adds.begin(), adds.end());
  }

  // At one offset: imports first, then insertions in recipe order, then a replacement.
  std::sort(placed.begin(), placed.end(), [](const Placed& a, const Placed& b) {
    auto rank = [](const Placed& p) { return p.s.import ? 0 : p.s.begin == p.s.end ? 1 : 2; };
    if (a.s.begin != b.s.begin) return a.s.begin < b.s.begin;
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return a.seq < b.seq;
  });
  std::string out(impl_->utf8().substr(0, impl_->bom));
  out.reserve(impl_->utf8().size() + 256);
  size_t cursor = 0;
  const size_t bom = impl_->bom;
  if (changes) changes->clear();
  for (const auto& p : placed) {
    if (p.s.begin >= cursor) out.append(src.substr(cursor, p.s.begin - cursor));
    size_t from = std::max(cursor, p.s.begin);
    size_t new_begin = out.size();
    out += p.s.text;
    size_t to = std::max(cursor, p.s.end);
    if (changes) changes->push_back({bom + from, bom + to, new_begin, out.size(), p.edit});
    cursor = to;
  }
  out.append(src.substr(cursor));
  if (impl_->codec.identity()) return out;
  // Every character was checked above: only a broken invariant can fail here.
  auto bytes = encoding::encode(out, impl_->codec);
  if (!bytes) throw Error("internal: " + bytes.error());
  return std::move(*bytes);
}

}  // namespace sitepatch::python
