// explain --run's candidate for a library's own custom-op seam: a frame whose function is
// decorated by `@register_custom_op("ns::op", mutates_args=...)`, where that decorator
// factory gives back what it decorates unchanged (the torch.library call stubbed out).
// Made real, it turns every op the library declares through it into one node to dynamo,
// with the schema and the fake the library already wrote: one fix for many ops, and one
// that uses the library's own knowledge of what each op mutates and returns.
#include <algorithm>
#include <cctype>

#include "engine/explain/explain_impl.hpp"
#include "engine/proofs/run_impl.hpp"
#include "sitepatch/python/op_seam.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {

namespace {

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// The parameter a direct call `factory(name, fn)` passes the function in, "" when none.
std::string function_param(const python::SeamFactory& f) {
  if (!f.function_param.empty()) return f.function_param;
  for (const char* n : {"fn", "func", "function", "f"})
    if (f.params.size() > 1 && f.params[1] == n) return n;
  return "";
}

// A registration that gives way: where torch refuses an op (an annotation its schema
// cannot read, a name already taken), the function stays what the library left it.
std::string seam_body(const python::SeamFactory& f, bool fake) {
  const std::string& name = f.params[0];
  std::string fn = function_param(f);
  std::string body;
  std::string call;
  if (fake) {
    call = "        torch.library.register_fake(" + name + ", function)\n";
  } else {
    std::string mutates = "\"unknown\"";
    if (has(f.params, "mutates_args")) {
      // "" (or any string but "unknown") is what the stub let through for "nothing": torch wants an iterable.
      body += "mutates = () if isinstance(mutates_args, str) and mutates_args != \"unknown\" else mutates_args\n";
      mutates = "mutates";
    }
    call = "        return torch.library.custom_op(" + name + ", function, mutates_args=" + mutates;
    for (const char* k : {"device_types", "schema"})
      if (has(f.params, k)) call += std::string(", ") + k + "=" + k;
    call += ")\n";
  }
  body += "def register(function):\n"
          "    # sitepatch: made real; where torch refuses an op, it stays the plain function it was\n"
          "    try:\n" + call +
          "    except Exception:\n" +
          (fake ? "        pass\n    return function\n" : "        return function\n") +
          "\n";
  body += fn.empty() ? "return register\n" : "return register if " + fn + " is None else register(" + fn + ")\n";
  return body;
}

bool looks_fake(std::string name) {
  for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
  return name.find("fake") != std::string::npos || name.find("abstract") != std::string::npos ||
         name.find("meta") != std::string::npos;
}

}  // namespace

// The seams of a module's file (by module name, below the frame's site folder), read once.
const python::ModuleSeams* CandidateFinder::seams_of(const std::string& site_dir, const std::string& module) {
  std::string base = module;
  std::replace(base.begin(), base.end(), '.', '/');
  for (std::string candidate : {base + ".py", base + "/__init__.py"}) {
    std::string path = site_dir + "/" + candidate;
    auto it = seams_.find(path);
    if (it == seams_.end()) {
      auto data = s_.host.read({path});
      std::unique_ptr<python::ModuleSeams> parsed;
      if (data[0].exists && !data[0].is_dir) {
        try {
          parsed = std::make_unique<python::ModuleSeams>(python::module_seams(
              data[0].content, module, util::ends_with(candidate, "__init__.py")));
        } catch (const Error&) {  // too large to parse: no seam read there
        }
      }
      it = seams_.emplace(path, std::move(parsed)).first;
    }
    if (it->second) return it->second.get();
  }
  return nullptr;
}

// The identity factory `callee` names in `module` (defined there or imported by name),
// with the module it is defined in.
const python::SeamFactory* CandidateFinder::factory(const std::string& site_dir, const std::string& module,
                                                    const python::ModuleSeams& here, const std::string& callee,
                                                    std::string& where) {
  if (auto f = here.factories.find(callee); f != here.factories.end()) {
    where = module;
    return &f->second;
  }
  auto imported = here.from_imports.find(callee);
  if (imported == here.from_imports.end()) return nullptr;
  std::string from = imported->second.substr(0, imported->second.find(':'));
  std::string name = imported->second.substr(imported->second.find(':') + 1);
  const python::ModuleSeams* there = seams_of(site_dir, from);
  if (!there) return nullptr;
  auto f = there->factories.find(name);
  if (f == there->factories.end()) return nullptr;
  where = from;
  return &f->second;
}

std::optional<Candidate> CandidateFinder::seam(const PlacedFrame& f, FrameNote& note) {
  if (f.site_dir.empty() || f.module.empty()) return std::nullopt;
  const python::ModuleSeams* here = seams_of(f.site_dir, f.module);
  if (!here) return std::nullopt;
  const python::OpDecorator* op = here->op_at(f.frame.line);
  if (!op || op->function != last_name(f.qualified)) return std::nullopt;
  std::string op_module;
  const python::SeamFactory* real = factory(f.site_dir, f.module, *here, op->callee, op_module);
  if (!real || looks_fake(real->name)) {
    note.seam_why = "decorated by " + util::printable(op->callee) + "(" + util::printable(op->op) + "), " +
                    (real ? "a fake's registration" : "whose factory does not give back what it decorates unchanged "
                                                      "(it registers for real, or its source is not read here)") +
                    ": no stub to make real";
    return std::nullopt;
  }
  // The library's fake for the same op, registered through its own stubbed factory.
  const python::SeamFactory* fake = nullptr;
  std::string fake_module, fake_of;
  for (const python::OpDecorator& other : here->ops) {
    if (other.op != op->op || other.callee == op->callee) continue;
    std::string where;
    const python::SeamFactory* g = factory(f.site_dir, f.module, *here, other.callee, where);
    if (g && looks_fake(g->name)) {
      fake = g;
      fake_module = where;
      fake_of = other.function;
      break;
    }
  }
  Candidate c;
  c.kind = Candidate::seam;
  auto edits = [&](const python::SeamFactory& g, const std::string& module, bool is_fake) {
    for (int occurrence : g.occurrences) {
      Fix x;
      x.module = module;
      x.function = g.name;
      x.action = "replace-body";
      x.code = seam_body(g, is_fake);
      x.occurrence = g.defs > 1 ? occurrence : 0;
      x.ensure_import = "import torch";
      x.dist = f.dist;
      x.version = f.version;
      (c.fix.module.empty() ? c.fix : c.more.emplace_back()) = x;
    }
  };
  edits(*real, op_module, false);
  if (fake) edits(*fake, fake_module, true);
  c.shared = !f.site_dir.empty() && !shared_owner(s_.env, f.site_dir).empty();
  std::string seamed = real->name + (fake ? " and " + fake->name : "");
  c.fix.why = "the library's own custom-op seam: " + seamed + " (" + op_module + ") give back what they decorate "
              "unchanged, so " + util::printable(op->op) + " (" + f.name() + ") is a plain function dynamo traces into; "
              "made real (torch.library.custom_op" + (fake ? ", register_fake" : "") + "), every op the library declares "
              "through them is one node to dynamo, with the mutates_args " +
              (fake ? "and the fake (" + fake_of + ") " : "") + "it wrote";
  c.fix.cost = "every op registered through " + real->name + " becomes a torch custom op: the dispatch cost the library "
               "left out (microseconds a call), no autograd through them unless registered; an op torch refuses stays "
               "a plain function";
  note.seam_why = "decorated by " + util::printable(op->callee) + "(" + util::printable(op->op) + "), which " + op_module +
                  " defines as an identity: the seam made real is a candidate" +
                  (fake ? " (its fake: " + fake_of + ", through " + fake->name + ")" : " (no fake found)");
  return c;
}

}  // namespace sitepatch::engine
