#include "python/plan.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::python {
namespace {

std::string line_list(const std::vector<int>& lines) {
  std::string s = lines.size() == 1 ? "line " : "lines ";
  for (size_t i = 0; i < lines.size(); ++i) s += (i ? ", " : "") + std::to_string(lines[i]);
  return s;
}

// `@overload` (or `@typing.overload`, `@typing_extensions.overload`): a signature for type
// checkers, not the definition that runs.
bool overload_signature(const Context& cx, const Def& d) {
  std::string_view decorators = cx.src.substr(ts_node_start_byte(d.outer),
                                              ts_node_start_byte(d.node) - ts_node_start_byte(d.outer));
  for (auto& line : util::split(decorators, '\n')) {
    std::string t = util::trim(line);
    if (!util::starts_with(t, "@")) continue;
    t = util::trim(t.substr(1));
    for (const char* name : {"overload", "typing.overload", "typing_extensions.overload"})
      if (t == name) return true;
  }
  return false;
}

}  // namespace

bool fail(EditResult& r, Failure f, std::string message) {
  r.outcome = Outcome::failed;
  r.failure = f;
  r.message = std::move(message);
  return false;
}

const Def* locate(const Context& cx, const recipe::Edit& e, EditResult& r) {
  const auto* found = cx.defs.find(e.target);
  if (!found) {
    r.nearest = util::nearest(e.target, cx.defs.names());
    fail(r, Failure::not_found, std::string(recipe::kind_name(e.kind)) + " " + e.target + " is not defined");
    return nullptr;
  }
  std::vector<const Def*> same_kind;
  for (size_t i : *found)
    if (cx.defs.all()[i].kind == e.kind) same_kind.push_back(&cx.defs.all()[i]);
  // Without `occurrence:`, `@overload` signatures beside the one implementation do not count.
  if (e.occurrence == 0 && same_kind.size() > 1) {
    std::vector<const Def*> real;
    for (const Def* d : same_kind)
      if (!overload_signature(cx, *d)) real.push_back(d);
    if (real.size() == 1) same_kind = real;
  }
  if (same_kind.empty()) {
    const Def& other = cx.defs.all()[found->front()];
    r.line = other.line;
    fail(r, Failure::invalid, e.target + " is a " + std::string(recipe::kind_name(other.kind)) + ", not a " +
                                  std::string(recipe::kind_name(e.kind)));
    return nullptr;
  }
  std::vector<int> lines;
  for (const Def* d : same_kind) lines.push_back(d->line);
  std::string defined = e.target + " is defined " + text::times(lines.size()) + " (" +
                        line_list(lines) + ")";
  if (e.occurrence < 0) {
    fail(r, Failure::invalid, "occurrence must be 1 or more, not " + std::to_string(e.occurrence));
    return nullptr;
  }
  if (e.occurrence == 0 && same_kind.size() > 1) {
    r.lines = lines;
    fail(r, Failure::ambiguous, defined + ": add `occurrence: N` to pick one");
    return nullptr;
  }
  if (e.occurrence > int(same_kind.size())) {
    r.lines = lines;
    fail(r, Failure::ambiguous, defined + ": there is no occurrence " + std::to_string(e.occurrence));
    return nullptr;
  }
  const Def* d = same_kind[e.occurrence == 0 ? 0 : size_t(e.occurrence - 1)];
  r.line = d->line;
  r.original = std::string(ts::text(cx.src, d->outer));
  return d;
}

}  // namespace sitepatch::python
