// An edit of an abstract method (`@abstractmethod`, or a body that only raises
// NotImplementedError) changes code that never runs: what runs is an override. plan
// warns and names the overrides it finds in the method's distribution.
#include <algorithm>
#include <map>
#include <regex>
#include <set>

#include "engine/internal.hpp"
#include "sitepatch/python/module.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine::detail {
namespace {

// Why the method whose text is `original` is abstract, or "".
std::string abstract_reason(const std::string& original) {
  auto lines = util::split(original, '\n');
  size_t k = 0;
  for (; k < lines.size(); ++k) {
    std::string t = util::trim(lines[k]);
    if (!util::starts_with(t, "@")) break;
    if (t.find("abstractmethod") != std::string::npos || t.find("abstractproperty") != std::string::npos)
      return "@abstractmethod";
  }
  // Past the signature (it may span lines: up to the line that ends it with `:`).
  for (; k < lines.size(); ++k) {
    std::string t = util::trim(lines[k].substr(0, lines[k].find('#')));
    if (!t.empty() && t.back() == ':') break;
  }
  std::vector<std::string> body;
  for (++k; k < lines.size(); ++k) {
    std::string t = util::trim(lines[k]);
    if (!t.empty() && t[0] != '#') body.push_back(t);
  }
  // A docstring first: the lines up to its closing quotes.
  if (!body.empty() && (util::starts_with(body[0], "\"\"\"") || util::starts_with(body[0], "'''") ||
                        util::starts_with(body[0], "r\"\"\""))) {
    std::string q = body[0].find("'''") != std::string::npos ? "'''" : "\"\"\"";
    size_t end = 0;
    bool closed = body[0].find(q, body[0].find(q) + 3) != std::string::npos;
    while (!closed && ++end < body.size()) closed = body[end].find(q) != std::string::npos;
    body.erase(body.begin(), body.begin() + long(std::min(end + 1, body.size())));
  }
  if (body.empty()) return "";
  for (auto& t : body)
    if (t != "pass" && t != "..." && !util::starts_with(t, "raise NotImplementedError")) return "";
  return std::find_if(body.begin(), body.end(), [](auto& t) { return util::starts_with(t, "raise"); }) != body.end()
             ? "its body only raises NotImplementedError"
             : "";
}

struct ClassLine {
  std::string name, file;
  std::vector<std::string> bases;  // last dotted part of each
};

// The Python files where subclasses are looked for: the distribution's (RECORD), or,
// where it lists none (Debian's egg-info, a distribution not found), every .py file of
// the top-level package the edited file is in.
std::vector<std::string> candidate_files(Session& s, const site::Distribution* d, const std::string& site_dir,
                                         const std::string& rel) {
  std::vector<std::string> paths;
  if (d)
    for (auto& row : s.distributions().files(*d))
      if (util::ends_with(row.path, ".py")) paths.push_back(d->site_dir + "/" + row.path);
  if (!paths.empty() || rel.find('/') == std::string::npos) return paths;
  std::string top = rel.substr(0, rel.find('/'));
  for (auto& f : python_files(s.host, site_dir + "/" + top, top + "/")) paths.push_back(f.path);
  return paths;
}

// Every `class X(...)` statement of `paths` (one read, only those lines crossing a
// connection).
std::vector<ClassLine> class_lines(Session& s, const std::vector<std::string>& paths) {
  static const std::regex statement(R"(^\s*class\s+([A-Za-z_]\w*)\s*\(([^)]*)\))");
  std::vector<ClassLine> out;
  for (auto& f : s.host.read_lines(paths, {"class "})) {
    for (auto& line : util::split(f.content, '\n')) {
      std::smatch m;
      if (!std::regex_search(line, m, statement)) continue;
      ClassLine c{m[1], f.path, {}};
      for (auto& base : util::split(m[2].str(), ',')) {
        std::string b = util::trim(base);
        if (b.empty() || b.find('=') != std::string::npos) continue;  // metaclass=...
        c.bases.push_back(b.substr(b.rfind('.') == std::string::npos ? 0 : b.rfind('.') + 1));
      }
      out.push_back(std::move(c));
    }
  }
  return out;
}

// "Sub.method (rel:line)" for each subclass of `cls`, at any depth, that defines `method`.
std::vector<std::string> overrides(Session& s, const std::vector<std::string>& paths, const std::string& site_dir,
                                   const std::string& cls, const std::string& method) {
  auto classes = class_lines(s, paths);
  std::set<std::string> seen{cls};
  std::vector<const ClassLine*> subclasses;
  for (bool grew = true; grew;) {
    grew = false;
    for (auto& c : classes)
      if (!seen.count(c.name) && std::any_of(c.bases.begin(), c.bases.end(), [&](auto& b) { return seen.count(b); })) {
        seen.insert(c.name);
        subclasses.push_back(&c);
        grew = true;
      }
  }
  std::set<std::string> files;
  for (auto* c : subclasses) files.insert(c->file);
  std::map<std::string, python::Module> parsed;
  for (auto& f : s.host.read(std::vector<std::string>(files.begin(), files.end())))
    if (f.exists) {
      try {
        parsed.emplace(f.path, python::Module(f.content, f.path));
      } catch (const Error&) {
        // a file it cannot parse names no override
      }
    }
  std::vector<std::string> out;
  for (auto* c : subclasses) {
    auto it = parsed.find(c->file);
    if (it == parsed.end()) continue;
    for (auto& def : it->second.definitions())
      if (def.qualified == c->name + "." + method)
        out.push_back(def.qualified + " (" +
                      (util::starts_with(c->file, site_dir + "/") ? c->file.substr(site_dir.size() + 1) : c->file) +
                      ":" + std::to_string(def.line) + ")");
  }
  return out;
}

}  // namespace

void note_abstract(Session& s, EditStatus& st, const recipe::Edit& e, const std::string& site_dir) {
  if (st.state != EditState::will_apply || st.original.empty() || !st.warning.empty()) return;
  size_t dot = e.target.rfind('.');
  if (dot == std::string::npos) return;
  std::string reason = abstract_reason(st.original);
  if (reason.empty()) return;
  std::string cls = e.target.substr(0, dot), method = e.target.substr(dot + 1);
  cls = cls.substr(cls.rfind('.') == std::string::npos ? 0 : cls.rfind('.') + 1);
  const site::Distribution* d = s.distributions().owner(site_dir, st.file);
  auto found = overrides(s, candidate_files(s, d, site_dir, st.file), site_dir, cls, method);
  // Many overrides (a scheduler base in torch has a dozen): the first few, and a count.
  constexpr size_t kShown = 6;
  std::string named = util::join(std::vector<std::string>(found.begin(), found.begin() + long(std::min(found.size(), kShown))), ", ");
  if (found.size() > kShown) named += " and " + std::to_string(found.size() - kShown) + " more";
  st.warning = e.target + " is abstract (" + reason + "): what runs is an override, which this edit leaves as it is" +
               (found.empty() ? std::string("; none was found in ") + (d ? d->name : "its package") +
                                    " (a subclass elsewhere?)"
                              : ": " + named + "; target those instead");
}

}  // namespace sitepatch::engine::detail
