// capture: the statements of each scope of the two texts are aligned by what they
// define (a def or class by name, an assignment by its variable, anything else by its
// text); a definition on both sides whose text differs becomes the smallest edit that
// covers the difference, a definition only the new text has becomes an insert-after of
// its neighbour, a new import an ensure-import. Everything else is an outside change.
// The result is checked by applying it: Module::apply is the judge, not this file.
#include "sitepatch/python/capture.hpp"

#include <algorithm>
#include <memory>
#include <optional>

#include "python/capture_body.hpp"
#include "python/capture_text.hpp"
#include "python/plan.hpp"
#include "python/text.hpp"
#include "python/tree.hpp"
#include "sitepatch/python/module.hpp"
#include "sitepatch/util/utf8.hpp"

namespace sitepatch::python {
namespace {

using detail::count_of;
using detail::differing_lines;
using detail::LineRun;
using detail::moved_imports;
using detail::trimmed;
using recipe::Action;
using recipe::Edit;
using recipe::TargetKind;

// One side: its text as UTF-8 with LF line ends (BOM dropped) and its tree.
struct Side {
  std::string text;
  std::unique_ptr<ts::Tree> tree;

  Side(const std::string& raw, const std::string& what) {
    std::string_view v = raw;
    if (v.substr(0, 3) == "\xEF\xBB\xBF") v.remove_prefix(3);
    text = text::to_lf(v);
    tree = std::make_unique<ts::Tree>(text, what);
  }
  std::string_view of(TSNode n) const { return ts::text(text, n); }
  std::string_view range(size_t b, size_t e) const { return std::string_view(text).substr(b, e - b); }
  int line(size_t off) const { return int(std::count(text.begin(), text.begin() + long(off), '\n')) + 1; }
};

enum class Kind { def, var, import, other };

struct Stmt {
  TSNode node{};  // as its block lists it (a decorated_definition for a decorated def)
  TSNode def{};   // function_definition / class_definition; the assignment of a var
  Kind kind = Kind::other;
  std::string name;
  std::string key;
  size_t begin = 0, end = 0;  // whole lines
};

Stmt describe(const Side& s, TSNode n) {
  Stmt st;
  st.node = n;
  st.begin = text::line_begin(s.text, ts_node_start_byte(n));
  st.end = text::line_after(s.text, ts_node_end_byte(n));
  TSNode inner = ts::is(n, "decorated_definition") ? ts::field(n, "definition") : n;
  if (ts::is(inner, "function_definition") || ts::is(inner, "class_definition")) {
    st.kind = Kind::def;
    st.def = inner;
    st.name = std::string(s.of(ts::field(inner, "name")));
    st.key = "def:" + st.name;
  } else if (ts::is(n, "expression_statement")) {
    auto kids = ts::named_children(n);
    if (kids.size() == 1 && ts::is(kids[0], "assignment") && ts::is(ts::field(kids[0], "left"), "identifier")) {
      st.kind = Kind::var;
      st.def = kids[0];
      st.name = std::string(s.of(ts::field(kids[0], "left")));
      st.key = "var:" + st.name;
    }
  } else if (ts::is(n, "import_statement") || ts::is(n, "import_from_statement") ||
             ts::is(n, "future_import_statement")) {
    st.kind = Kind::import;
    st.key = "import:" + std::string(s.of(n));
  }
  if (st.key.empty()) st.key = "stmt:" + std::string(s.of(n));
  return st;
}

std::vector<Stmt> statements(const Side& s, TSNode block) {
  std::vector<Stmt> out;
  for (TSNode n : ts::named_children(block)) out.push_back(describe(s, n));
  return out;
}

// The alignment of two statement lists by key: pairs (i, j), with -1 on the side a
// statement is missing from, in order. Common ends first; the middle by LCS.
std::vector<std::pair<int, int>> align(const std::vector<Stmt>& a, const std::vector<Stmt>& b) {
  size_t pre = 0;
  while (pre < a.size() && pre < b.size() && a[pre].key == b[pre].key) ++pre;
  size_t suf = 0;
  while (suf < a.size() - pre && suf < b.size() - pre && a[a.size() - 1 - suf].key == b[b.size() - 1 - suf].key) ++suf;
  size_t n = a.size() - pre - suf, m = b.size() - pre - suf;
  std::vector<std::vector<int>> L(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      L[i][j] = a[pre + i].key == b[pre + j].key ? L[i + 1][j + 1] + 1 : std::max(L[i + 1][j], L[i][j + 1]);
  std::vector<std::pair<int, int>> out;
  for (size_t k = 0; k < pre; ++k) out.push_back({int(k), int(k)});
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[pre + i].key == b[pre + j].key) {
      out.push_back({int(pre + i), int(pre + j)});
      ++i, ++j;
    } else if (j < m && (i == n || L[i][j + 1] >= L[i + 1][j])) {
      out.push_back({-1, int(pre + j)});
      ++j;
    } else {
      out.push_back({int(pre + i), -1});
      ++i;
    }
  }
  for (size_t k = 0; k < suf; ++k) out.push_back({int(a.size() - suf + k), int(b.size() - suf + k)});
  return out;
}

// Lines [b, e) of a side with `indent` taken off each line that has it, except the lines
// that begin inside a string literal: those are the literal's bytes, kept as they are
// (apply re-indents code the same way).
std::string dedent(const Side& s, size_t b, size_t e, std::string_view indent) {
  auto literals = string_ranges(s.tree->root(), b, e);
  std::string out;
  for (size_t at = b; at < e;) {
    size_t end = std::min(e, text::line_after(s.text, at));
    std::string_view line = s.range(at, end);
    bool literal = std::any_of(literals.begin(), literals.end(), [&](auto& r) { return r.begin < at && at < r.end; });
    if (!literal && line.substr(0, indent.size()) == indent) line.remove_prefix(indent.size());
    else if (!literal && text::strip(line).empty()) line = "\n";
    out += line;
    at = end;
  }
  return out;
}

std::string indent_of(const Side& s, size_t off) {
  return std::string(text::leading_ws(s.text, text::line_begin(s.text, off)));
}

// What a decorated definition is decorated with, outermost first.
std::vector<std::string> decorators(const Side& s, const Stmt& st) {
  std::vector<std::string> out;
  if (!ts::is(st.node, "decorated_definition")) return out;
  for (TSNode dec : ts::named_children(st.node)) {
    if (!ts::is(dec, "decorator")) continue;
    for (TSNode e : ts::named_children(dec))
      if (!ts::is(e, "comment")) {
        out.push_back(std::string(s.of(e)));
        break;
      }
  }
  return out;
}

// A definition's parts: header (`def f(x):` up to the colon before the body), its
// docstring, and its body after the docstring.
struct Parts {
  std::string header, doc;
  size_t body_begin = 0, body_end = 0;
  bool one_line = false;
  TSNode block{};
};

Parts parts_of(const Side& s, TSNode def) {
  Parts p;
  size_t colon = 0;
  for (const auto& c : ts::children(def)) {
    if (ts::is(c.node, ":") && ts_node_is_null(p.block)) colon = ts_node_end_byte(c.node);
    if (c.field == "body") p.block = c.node;
  }
  p.header = std::string(s.range(ts_node_start_byte(def), colon));
  if (ts_node_is_null(p.block)) return p;
  p.one_line = text::line_begin(s.text, ts_node_start_byte(p.block)) == text::line_begin(s.text, colon);
  size_t after = text::line_after(s.text, colon);
  for (TSNode n : ts::named_children(p.block)) {
    if (ts::is(n, "comment")) continue;
    auto kids = ts::named_children(n);
    if (ts::is(n, "expression_statement") && kids.size() == 1 && ts::is(kids[0], "string")) {
      p.doc = std::string(s.of(n));
      after = text::line_after(s.text, ts_node_end_byte(n));
    }
    break;
  }
  p.body_begin = after;
  p.body_end = text::line_after(s.text, ts_node_end_byte(p.block));
  return p;
}

Edit make(TargetKind kind, std::string target, Action action, std::string code = "") {
  Edit e;
  e.kind = kind;
  e.target = std::move(target);
  e.action = action;
  e.code = std::move(code);
  return e;
}

// Where an outside change lies: old[ob, oe) became new[nb, ne), the blank lines around
// it included (a change's whole gap between the statements both sides share).
struct Span {
  size_t ob = 0, oe = 0, nb = 0, ne = 0;
};

// How fine the edits are: the smallest; every changed function whole (a method as
// `Class.method`: never its class for it); every changed top-level definition whole (a
// name defined twice, which no edit of its own can name).
enum class Grain { fine, functions, top_level };

struct Capturer {
  const Side& o;
  const Side& n;
  Grain grain = Grain::fine;
  std::vector<Edit> edits;
  std::vector<OutsideChange> outside;
  std::vector<Span> spans;  // one per outside change

  TargetKind kind_of(const Stmt& st) const {
    if (st.kind == Kind::var) return TargetKind::variable;
    return ts::is(st.def, "class_definition") ? TargetKind::class_ : TargetKind::function;
  }

  Edit whole(const Stmt& sn, const std::string& q) const {
    return make(kind_of(sn), q, Action::replace_function,
                dedent(n, sn.begin, sn.end, indent_of(n, ts_node_start_byte(sn.node))));
  }

  void add_outside(const std::vector<const Stmt*>& olds, const std::vector<const Stmt*>& news, Span span) {
    spans.push_back(span);
    OutsideChange c;
    if (!olds.empty()) {
      c.old_first = o.line(olds.front()->begin);
      c.old_last = o.line(olds.back()->end - 1);
    }
    if (!news.empty()) {
      c.new_first = n.line(news.front()->begin);
      c.new_last = n.line(news.back()->end - 1);
      c.text = std::string(n.range(news.front()->begin, news.back()->end));
    } else if (!olds.empty()) {
      c.text = std::string(o.range(olds.front()->begin, olds.back()->end));
    }
    outside.push_back(std::move(c));
  }

  // Decorators added at either end, removed anywhere, the rest in the same order; false
  // when the change is not that (a reordering, one added in the middle).
  bool decorator_edits(const Stmt& so, const Stmt& sn, const std::string& q, std::vector<Edit>& out) const {
    auto a = decorators(o, so), b = decorators(n, sn);
    std::vector<std::string> kept_a, kept_b;
    for (auto& d : a)
      if (std::find(b.begin(), b.end(), d) != b.end()) kept_a.push_back(d);
      else out.push_back(make(kind_of(sn), q, Action::remove_decorator, d));
    for (auto& d : b)
      if (std::find(a.begin(), a.end(), d) != a.end()) kept_b.push_back(d);
    if (kept_a != kept_b) return false;
    size_t top = 0;
    while (top < b.size() && std::find(a.begin(), a.end(), b[top]) == a.end()) ++top;
    for (size_t i = 0; i < top; ++i) out.push_back(make(kind_of(sn), q, Action::add_decorator, b[i]));
    for (size_t i = top; i < b.size(); ++i) {
      if (std::find(a.begin(), a.end(), b[i]) != a.end()) continue;
      // Below every kept one: innermost; between kept ones there is no action for it.
      for (size_t k = i; k < b.size(); ++k)
        if (std::find(a.begin(), a.end(), b[k]) != a.end()) return false;
      Edit e = make(kind_of(sn), q, Action::add_decorator, b[i]);
      e.innermost = true;
      out.push_back(std::move(e));
    }
    return true;
  }

  // A function whose text changed: decorators, then the body (prepended to, or
  // replaced); the whole definition when its header or docstring changed.
  void function(const Stmt& so, const Stmt& sn, const std::string& q) {
    Parts po = parts_of(o, so.def), pn = parts_of(n, sn.def);
    std::vector<Edit> out;
    bool fits = po.header == pn.header && po.doc == pn.doc && decorator_edits(so, sn, q, out);
    std::string_view bo = o.range(po.body_begin, po.body_end), bn = n.range(pn.body_begin, pn.body_end);
    if (fits && bo != bn) {
      std::string indent = indent_of(n, ts_node_start_byte(pn.block));
      if (po.one_line || pn.one_line || bn.empty()) {
        fits = false;
      } else if (!bo.empty() && bn.size() > bo.size() && bn.substr(bn.size() - bo.size()) == bo) {
        out.push_back(make(kind_of(sn), q, Action::prepend_body,
                           dedent(n, pn.body_begin, pn.body_end - bo.size(), indent)));
      } else if (auto ins = detail::insertion(o.text, so.def, po.body_begin, po.body_end, n.text, sn.def,
                                              pn.body_begin, pn.body_end)) {
        // Lines typed beside a statement: placed by that statement, whatever else the
        // function holds (what survives an upgrade that changes the rest of it).
        Edit e = make(kind_of(sn), q, ins->before ? Action::insert_before : Action::insert_after,
                      dedent(n, ins->begin, ins->end, ins->indent));
        e.anchor = ins->anchor;
        out.push_back(std::move(e));
      } else if (auto h = detail::unique_hunk(bo, bn, o.range(so.begin, so.end))) {
        // A few lines of a longer body: those lines, old -> new.
        Edit e = make(kind_of(sn), q, Action::replace);
        std::tie(e.old_text, e.new_text) = trimmed(*h, o.range(so.begin, so.end));
        out.push_back(std::move(e));
      } else {
        // The blank lines that open the body are kept by replace-body, not written.
        size_t from = pn.body_begin;
        while (from < pn.body_end && text::strip(n.range(from, text::line_after(n.text, from))).empty())
          from = text::line_after(n.text, from);
        out.push_back(make(kind_of(sn), q, Action::replace_body, dedent(n, from, pn.body_end, indent)));
      }
    }
    if (!fits) out = {whole(sn, q)};
    edits.insert(edits.end(), out.begin(), out.end());
  }

  // A class whose text changed: its decorators, then its body statement by statement;
  // the whole class when something in it has no name of its own.
  void class_(const Stmt& so, const Stmt& sn, const std::string& q) {
    Parts po = parts_of(o, so.def), pn = parts_of(n, sn.def);
    std::vector<Edit> out;
    if (po.header != pn.header || po.one_line || pn.one_line || !decorator_edits(so, sn, q, out)) {
      edits.push_back(whole(sn, q));
      return;
    }
    Capturer inner{o, n, grain, {}, {}, {}};
    inner.scope(statements(o, po.block), statements(n, pn.block), q + ".");
    if (!inner.outside.empty()) {
      edits.push_back(whole(sn, q));
      return;
    }
    edits.insert(edits.end(), out.begin(), out.end());
    edits.insert(edits.end(), inner.edits.begin(), inner.edits.end());
  }

  void changed(const Stmt& so, const Stmt& sn, const std::string& prefix) {
    std::string q = prefix + sn.name;
    if (so.kind == Kind::var) {
      TSNode vo = ts::field(so.def, "right"), vn = ts::field(sn.def, "right");
      bool same_left = !ts_node_is_null(vo) && !ts_node_is_null(vn) &&
                       o.range(so.begin, ts_node_start_byte(vo)) == n.range(sn.begin, ts_node_start_byte(vn)) &&
                       o.range(ts_node_end_byte(vo), so.end) == n.range(ts_node_end_byte(vn), sn.end);
      if (same_left) edits.push_back(make(TargetKind::variable, q, Action::set_value, std::string(n.of(vn))));
      else add_outside({&so}, {&sn}, {so.begin, so.end, sn.begin, sn.end});
      return;
    }
    bool classes = ts::is(sn.def, "class_definition") && ts::is(so.def, "class_definition");
    bool functions = ts::is(sn.def, "function_definition") && ts::is(so.def, "function_definition");
    if (grain == Grain::top_level) edits.push_back(whole(sn, q));
    else if (classes) class_(so, sn, q);
    else if (functions && grain == Grain::fine) function(so, sn, q);
    else edits.push_back(whole(sn, q));
  }

  // Statements only the new text has, after `anchor` (the last statement both have, or
  // null): imports become ensure-imports, definitions and assignments an insert-after of
  // the anchor; with anything else, or nothing to anchor to, an outside change.
  void added(const std::vector<const Stmt*>& olds, const std::vector<const Stmt*>& news, const Stmt* anchor,
             const std::string& prefix, Span gap) {
    if (news.empty() && olds.empty()) return;
    bool plain = olds.empty() && std::all_of(news.begin(), news.end(), [](auto* s) { return s->kind != Kind::other; });
    std::vector<const Stmt*> defs;
    for (auto* s : news)
      if (s->kind != Kind::import) defs.push_back(s);
    bool anchored = defs.empty() || (anchor && anchor->kind != Kind::import && anchor->kind != Kind::other);
    bool one_line_imports = std::all_of(news.begin(), news.end(), [&](auto* s) {
      return s->kind != Kind::import || n.range(s->begin, s->end).find('\n') + 1 == s->end - s->begin;
    });
    if (!plain || !anchored || !one_line_imports || (!prefix.empty() && defs.size() != news.size())) {
      add_outside(olds, news, gap);
      return;
    }
    for (auto* s : news) {
      if (s->kind != Kind::import) continue;
      Edit e = make(TargetKind::function, "", Action::none);
      e.ensure_import = std::string(n.of(s->node));
      edits.push_back(std::move(e));
    }
    if (defs.empty()) return;
    // Contiguous: the lines between them are theirs (blank ones, comments).
    edits.push_back(make(kind_of(*anchor), prefix + anchor->name, Action::insert_after,
                         dedent(n, defs.front()->begin, defs.back()->end,
                                indent_of(n, ts_node_start_byte(defs.front()->node)))));
  }

  void scope(const std::vector<Stmt>& os, const std::vector<Stmt>& ns, const std::string& prefix) {
    const Stmt* anchor = nullptr;
    std::vector<const Stmt*> olds, news;
    size_t prev_o = os.empty() ? 0 : text::line_begin(o.text, os.front().begin);
    size_t prev_n = ns.empty() ? 0 : text::line_begin(n.text, ns.front().begin);
    if (prefix.empty()) prev_o = prev_n = 0;  // the module's gap starts at its first byte
    for (auto [i, j] : align(os, ns)) {
      if (i < 0) news.push_back(&ns[size_t(j)]);
      if (j < 0) olds.push_back(&os[size_t(i)]);
      if (i < 0 || j < 0) continue;
      const Stmt& so = os[size_t(i)];
      const Stmt& sn = ns[size_t(j)];
      added(olds, news, anchor, prefix, {prev_o, so.begin, prev_n, sn.begin});
      olds.clear();
      news.clear();
      anchor = &sn;
      prev_o = so.end;
      prev_n = sn.end;
      if (o.range(so.begin, so.end) == n.range(sn.begin, sn.end)) continue;
      if (so.kind == Kind::def || so.kind == Kind::var) changed(so, sn, prefix);
      else add_outside({&so}, {&sn}, {so.begin, so.end, sn.begin, sn.end});  // the same key, other bytes
    }
    size_t end_o = prefix.empty() || os.empty() ? o.text.size() : os.back().end;
    size_t end_n = prefix.empty() || ns.empty() ? n.text.size() : ns.back().end;
    added(olds, news, anchor, prefix, {prev_o, std::max(prev_o, end_o), prev_n, std::max(prev_n, end_n)});
  }
};

// An outside change as a replace with no target: the lines of its span that differ,
// with lines before (or after) it taken along until the old text is found once in the
// module. nullopt when no such text is near.
std::optional<Edit> module_replace(const Side& o, const Side& n, const Span& sp, bool after_first) {
  std::string_view a = o.range(sp.ob, sp.oe), b = n.range(sp.nb, sp.ne);
  LineRun r = differing_lines(a, b);
  if (r.pre == r.a_end && r.pre == r.b_end) return std::nullopt;
  size_t a0 = sp.ob, a1 = sp.ob;
  for (size_t i = 0; i < r.pre; ++i) a0 += r.a[i].size();
  for (size_t i = 0; i < r.a_end; ++i) a1 += r.a[i].size();
  std::string old_lines(o.range(a0, a1)), new_lines;
  for (size_t i = r.pre; i < r.b_end; ++i) new_lines += r.b[i];
  // Context from pip's text (the same bytes are kept on both sides) until unique.
  size_t lo = a0, hi = a1;
  for (int tries = 0; tries < 8; ++tries) {
    if (!text::strip(old_lines).empty() && count_of(o.text, old_lines) == 1) {
      Edit e = make(TargetKind::function, "", Action::replace);
      std::tie(e.old_text, e.new_text) = trimmed({old_lines, new_lines}, o.text);
      return e;
    }
    if (lo > 0 && !(after_first && hi < o.text.size())) {
      size_t before = text::line_begin(o.text, lo - 1);
      std::string ctx(o.range(before, lo));
      old_lines = ctx + old_lines;
      new_lines = ctx + new_lines;
      lo = before;
    } else if (hi < o.text.size()) {
      size_t after = text::line_after(o.text, hi);
      std::string ctx(o.range(hi, after));
      old_lines += ctx;
      new_lines += ctx;
      hi = after;
    } else {
      break;
    }
  }
  return std::nullopt;
}

// Whether `edits` turn `old_text` into `new_text` byte for byte.
// What `edits` make of `old_text`; nullopt when one fails.
std::optional<std::string> applied(const std::string& old_text, const std::vector<Edit>& edits, const std::string& name) {
  try {
    Module m(old_text, name);
    std::vector<const Edit*> ptrs;
    for (auto& e : edits) ptrs.push_back(&e);
    std::vector<EditResult> results;
    std::string out = m.apply(ptrs, results);
    for (auto& r : results)
      if (r.outcome == Outcome::failed) return std::nullopt;
    return out;
  } catch (const Error&) {
    return std::nullopt;
  }
}

bool reproduces(const std::string& old_text, const std::string& new_text, const std::vector<Edit>& edits,
                const std::string& name) {
  auto out = applied(old_text, edits, name);
  return out && *out == new_text;
}

// One change covering every line that differs, for a file the edits do not reproduce.
OutsideChange whole_difference(const std::string& a, const std::string& b) {
  LineRun r = differing_lines(a, b);
  OutsideChange c;
  if (r.a_end > r.pre) c.old_first = int(r.pre) + 1, c.old_last = int(r.a_end);
  if (r.b_end > r.pre) c.new_first = int(r.pre) + 1, c.new_last = int(r.b_end);
  for (size_t i = r.pre; i < r.b_end; ++i) c.text += r.b[i];
  return c;
}

}  // namespace

namespace {

// The module's own lines that changed, as replaces with no target, when every one of
// them can be and the file then comes out byte for byte; else they stay outside changes.
void module_lines(const Side& o, const Side& n, const std::string& old_text, const std::string& new_text,
                  const std::string& name, Capturer& c) {
  if (c.outside.empty()) return;
  // Context from the lines above first; those can be a changed definition's (an edit
  // there and a replace overlapping it both fail), so the lines below next.
  for (bool after_first : {false, true}) {
    std::vector<Edit> edits = c.edits;
    for (const Span& sp : c.spans) {
      auto e = module_replace(o, n, sp, after_first);
      if (!e) return;
      edits.push_back(std::move(*e));
    }
    auto made = applied(old_text, edits, name);
    if (!made || !moved_imports(*made, new_text, edits)) continue;
    c.edits = std::move(edits);
    c.outside.clear();
    c.spans.clear();
    return;
  }
}



Capture named(const std::string& old_text, const std::string& new_text, const std::string& name) {
  Capture out;
  if (old_text == new_text) {
    out.exact = true;
    return out;
  }
  for (const std::string* t : {&old_text, &new_text})
    if (auto bad = util::first_invalid_utf8(*t)) {
      out.problem = "not UTF-8 (byte " + std::to_string(*bad) + " of " + (t == &old_text ? "pip's" : "the edited") +
                    " text): compared as a whole file only";
      out.outside.push_back(whole_difference(old_text, new_text));
      return out;
    }
  const std::string file = name.empty() ? "the module" : name;
  Side o(old_text, file + " (pip's text)"), n(new_text, file + " (the edited text)");
  // Smallest edits first; if they do not apply (a name defined twice) or do not give the
  // file back, whole functions, then whole definitions. Every recipe edit returned
  // applies to pip's text.
  std::optional<std::string> made;  // what the last edits that apply make
  for (Grain grain : {Grain::fine, Grain::functions, Grain::top_level}) {
    Capturer c{o, n, grain, {}, {}, {}};
    c.scope(statements(o, o.tree->root()), statements(n, n.tree->root()), "");
    module_lines(o, n, old_text, new_text, name, c);
    auto result = applied(old_text, c.edits, name);
    if (!result) continue;
    made = std::move(result);
    out.edits = std::move(c.edits);
    out.outside = std::move(c.outside);
    out.exact = out.outside.empty() && *made == new_text;
    if (!out.exact && out.outside.empty())
      if (auto moved = moved_imports(*made, new_text, out.edits)) {
        out.moved = std::move(*moved);
        out.exact = true;
      }
    if (out.exact || !out.outside.empty()) return out;
  }
  if (!made) {
    out.edits.clear();
    out.problem = "its changes could not be named (a name defined twice, say)";
    out.outside = {whole_difference(old_text, new_text)};
    return out;
  }
  // What is left between the edits' result and the edited text: often only blank lines
  // between definitions, which no edit names.
  out.problem = "the named edits found do not give its bytes back exactly";
  out.outside = {whole_difference(*made, new_text)};
  out.problem += " (the lines named are what they leave different)";
  return out;
}

}  // namespace

Capture capture(const std::string& old_text, const std::string& new_text, const std::string& name,
                bool whole_file) {
  Capture out = named(old_text, new_text, name);
  if (out.exact || !whole_file) return out;
  // The whole text as the edited file has it (after its BOM, which apply keeps).
  std::string_view v = new_text;
  if (v.substr(0, 3) == "\xEF\xBB\xBF") v.remove_prefix(3);
  Edit e = make(TargetKind::function, "", Action::replace_module, text::to_lf(v));
  if (!reproduces(old_text, new_text, {e}, name)) {
    out.problem = "not even the whole text gives its bytes back (mixed line endings, another encoding)";
    return out;
  }
  Capture whole;
  whole.edits = {std::move(e)};
  whole.exact = true;
  return whole;
}

}  // namespace sitepatch::python
