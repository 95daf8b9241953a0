#include "python/imports.hpp"

#include "python/module_impl.hpp"

#include <memory>

namespace sitepatch::python {
namespace {

std::string squeeze(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\\') out += c;
  return out;
}

// The bindings of one import statement node.
void bindings_of(TSNode stmt, std::string_view src, std::vector<Binding>& out) {
  bool from = !ts::is(stmt, "import_statement");
  std::string module = ts::is(stmt, "future_import_statement") ? "__future__" : "";
  for (const auto& c : ts::children(stmt)) {
    if (c.field == "module_name") module = squeeze(ts::text(src, c.node));
    if (ts::is(c.node, "wildcard_import"))
      out.push_back({"*", module + ":*", false, "", "*", ts::line(stmt)});
    if (c.field != "name") continue;
    std::string name, alias;
    if (ts::is(c.node, "aliased_import")) {
      name = squeeze(ts::text(src, ts::field(c.node, "name")));
      alias = squeeze(ts::text(src, ts::field(c.node, "alias")));
    } else {
      name = squeeze(ts::text(src, c.node));
    }
    Binding b;
    b.name = name;
    b.alias = alias;
    b.line = ts::line(stmt);
    if (from) {
      b.bound = alias.empty() ? name : alias;
      b.what = module + ":" + name;
    } else {
      b.plain = alias.empty();
      b.bound = alias.empty() ? name.substr(0, name.find('.')) : alias;
      b.what = name;
    }
    out.push_back(std::move(b));
  }
}

bool is_import(TSNode n) {
  return ts::is(n, "import_statement") || ts::is(n, "import_from_statement") ||
         ts::is(n, "future_import_statement");
}

bool is_docstring(TSNode n) {
  if (!ts::is(n, "expression_statement")) return false;
  auto kids = ts::named_children(n);
  return kids.size() == 1 && (ts::is(kids[0], "string") || ts::is(kids[0], "concatenated_string"));
}

}  // namespace

bool parse_import(std::string_view statement, ImportRequest& out, std::string& error) {
  out.text = text::to_lf(text::strip(statement));
  ts::Tree tree(out.text);
  TSNode root = tree.root();
  std::vector<TSNode> stmts;
  for (TSNode n : ts::named_children(root))
    if (!ts::is(n, "comment")) stmts.push_back(n);
  if (ts_node_has_error(root) || stmts.size() != 1 || !is_import(stmts[0])) {
    error = "ensure-import is not one import statement: " + out.text;
    return false;
  }
  out.from = !ts::is(stmts[0], "import_statement");
  out.future = ts::is(stmts[0], "future_import_statement");
  bindings_of(stmts[0], out.text, out.bindings);
  if (out.from) out.module = out.bindings.empty() ? "" : out.bindings[0].what.substr(0, out.bindings[0].what.rfind(':'));
  return true;
}

bool bound_by(const Binding& want, const std::vector<Binding>& have) {
  for (const auto& h : have) {
    if (want.plain) {
      // `import a.b` is there if `import a.b` or `import a.b.c` is.
      if (h.plain && (h.what == want.what || h.what.compare(0, want.what.size() + 1, want.what + ".") == 0))
        return true;
    } else if (h.bound == want.bound && h.what == want.what) {
      return true;
    }
  }
  return false;
}

std::string render_import(const ImportRequest& req, const std::vector<Binding>& names) {
  if (names.size() == req.bindings.size()) return req.text;
  std::string s = req.from ? "from " + req.module + " import " : "import ";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) s += ", ";
    s += names[i].name;
    if (!names[i].alias.empty()) s += " as " + names[i].alias;
  }
  return s;
}

namespace {

// The text of line `row` (0-based) of `src`, without its line end; "" past the end.
std::string_view line_text(std::string_view src, size_t row) {
  size_t at = 0;
  for (size_t r = 0; r < row; ++r) {
    at = src.find('\n', at);
    if (at == std::string_view::npos) return {};
    ++at;
  }
  std::string_view l = src.substr(at, src.find('\n', at) == std::string_view::npos ? src.npos : src.find('\n', at) - at);
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  return l;
}

// Whether a line another recipe wrote touches a new line put below row `above`: a
// three-way merge could not then undo the two recipes apart (git's merge joins changes
// that touch), so rolling back the older one would fail.
bool touches_others(const Context& cx, long above) {
  if (!cx.others || cx.others->empty()) return false;
  for (long row : {above, above + 1})
    if (row >= 0)
      if (std::string l(line_text(cx.src, size_t(row))); !text::strip(l).empty() && cx.others->count(l)) return true;
  return false;
}

}  // namespace

ImportSite import_site(const Context& cx) {
  ImportSite site;
  auto stmts = ts::named_children(cx.root);
  std::vector<TSNode> run;  // the leading docstring, __future__ imports and imports
  TSNode last_future{}, last_comment{};
  bool in_run = true, first_statement = true;
  for (TSNode s : stmts) {
    if (is_import(s)) bindings_of(s, cx.src, site.bound);
    if (!in_run) continue;
    if (ts::is(s, "comment")) {
      if (first_statement) last_comment = s;
      continue;
    }
    if ((first_statement && is_docstring(s)) || ts::is(s, "future_import_statement")) {
      last_future = s;
      run.push_back(s);
    } else if (is_import(s)) {
      run.push_back(s);
    } else {
      in_run = false;
    }
    first_statement = false;
  }
  // With nothing to follow, a new import goes after the comments heading the file
  // (shebang, coding line, licence), else at the top.
  auto after = [&](TSNode n, size_t& at, int& line) {
    if (ts_node_is_null(n)) n = last_comment;
    if (ts_node_is_null(n)) return;
    at = text::line_after(cx.src, ts_node_end_byte(n));
    line = int(ts_node_end_point(n).row) + 2;
  };
  after(run.empty() ? TSNode{} : run.back(), site.at, site.at_line);
  after(last_future, site.future_at, site.future_line);
  // Other recipes' imports at the end of the run: the last place whose neighbours are
  // the module's own lines, so each recipe's import can be rolled back alone.
  if (!run.empty() && touches_others(cx, long(ts_node_end_point(run.back()).row))) {
    size_t first = 0;
    for (size_t k = 0; k < run.size(); ++k)
      if (ts_node_eq(run[k], last_future)) first = k;  // a plain import goes below these
    for (size_t k = run.size() - 1; k-- > first;) {
      if (touches_others(cx, long(ts_node_end_point(run[k]).row))) continue;
      after(run[k], site.at, site.at_line);
      return site;
    }
    // Before the first import, when nothing but comments (or nothing) is above it.
    if (ts_node_is_null(last_future)) {
      long above = ts_node_is_null(last_comment) ? -1 : long(ts_node_end_point(last_comment).row);
      if (!touches_others(cx, above)) {
        site.at = ts_node_is_null(last_comment) ? 0 : text::line_after(cx.src, ts_node_end_byte(last_comment));
        site.at_line = int(above) + 2;
      }
    }
  }
  return site;
}

std::vector<ImportedName> Module::imported_names() const {
  std::vector<ImportedName> out;
  std::string_view src = impl_->text();
  for (TSNode s : ts::named_children(impl_->tree->root())) {
    if (!ts::is(s, "import_from_statement")) continue;
    std::vector<Binding> bindings;
    bindings_of(s, src, bindings);
    for (auto& b : bindings) {
      std::string module = b.what.substr(0, b.what.rfind(':'));
      out.push_back({b.bound, module, b.bound == "*" ? "*" : b.name, b.line});
    }
  }
  return out;
}

}  // namespace sitepatch::python
