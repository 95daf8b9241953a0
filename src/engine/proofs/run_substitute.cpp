// explain --run's candidate for a break at a C function the library also defines in pure
// Python (`try: from zlib import crc32` / `except ImportError: def crc32(...)`, or an
// import from its own pure-Python module): torch.compiler.substitute_in_graph gives dynamo
// that definition to trace where the C one is called, and eager runs keep calling C.
#include <algorithm>

#include "engine/explain/explain_impl.hpp"
#include "engine/proofs/run_impl.hpp"
#include "sitepatch/python/fallback.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {

namespace {

// `def name(` -> `def <as>(`, its decorators left out: substitute_in_graph takes a plain
// function (a cache's wrapper is none), and dynamo traces the body alone.
std::string renamed(const std::string& def, const std::string& name, const std::string& as) {
  size_t at = def.find("def " + name + "(");
  if (at == std::string::npos) at = def.find("def " + name + " (");
  if (at == std::string::npos) return "";
  return "def " + as + def.substr(at + 4 + name.size());
}

std::string indented(const std::string& text, const std::string& pad) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    std::string line = text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    out += (line.empty() ? "" : pad) + line + "\n";
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

// The code put after the module's bindings of `name`: the pure-Python one registered for
// the C one, only where both are there and this torch can (else nothing changes).
std::string substitute_code(const python::NameBindings& b, const std::string& pure_import) {
  std::string as = "_sitepatch_traceable_" + b.name;
  std::string code = "try:  # sitepatch: dynamo traces the library's pure-Python " + b.name +
                     " where the C one is called; eager runs still call C\n";
  if (!pure_import.empty()) {
    std::string module = pure_import.substr(0, pure_import.find(':'));
    std::string fn = pure_import.substr(pure_import.find(':') + 1);
    code += "    from " + module + " import " + fn + " as " + as + "\n";
    code += "    torch.compiler.substitute_in_graph(" + b.name + ", skip_signature_check=True)(" + as + ")\n";
    code += "except (ImportError, AttributeError, TypeError):  # no pure module, or this torch cannot substitute\n";
  } else {
    std::string def = renamed(b.defs.front(), b.name, as);
    if (def.empty()) return "";
    code += "    @torch.compiler.substitute_in_graph(" + b.name + ", skip_signature_check=True)\n";
    code += indented(def, "    ");
    code += "except (AttributeError, TypeError):  # this torch cannot substitute, or " + b.name + " is no function it takes\n";
  }
  code += "    pass\n";
  return code;
}

}  // namespace

std::optional<Candidate> CandidateFinder::substitute(const ExplainedBreak& b) {
  const std::string& op = b.logged.brk.operation;
  if (op.empty() || b.last < 0 || op.find('.') == std::string::npos) return std::nullopt;
  const PlacedFrame& f = b.frames[size_t(b.last)];
  if (f.kind != explain::FrameKind::library || f.site_dir.empty() || f.module.empty()) return std::nullopt;
  std::string unreadable;
  const python::SourceFacts* source = source_of(f, unreadable);
  if (!source) return std::nullopt;
  std::string op_module = op.substr(0, op.rfind('.')), op_name = op.substr(op.rfind('.') + 1);
  bool package = util::ends_with(f.rel, "__init__.py");
  for (const std::string& callee : source->callees_at(f.frame.line)) {
    if (callee.find_first_of(".[(") != std::string::npos) continue;  // a bare name the module binds
    python::NameBindings names = python::module_bindings(source->text(), callee, f.module, package);
    // The C function: an import of the operation dynamo stopped at.
    bool c_one = std::any_of(names.imports.begin(), names.imports.end(),
                             [&](const std::string& i) { return i == op_module + ":" + op_name; });
    if (!c_one || names.next_definition.empty()) continue;
    std::string pure_import;
    for (const std::string& i : names.imports)
      if (i != op_module + ":" + op_name && util::starts_with(i, f.module.substr(0, f.module.find('.')) + "."))
        pure_import = i;  // the library's own module beside the C one
    if (names.defs.empty() && pure_import.empty()) continue;
    std::string code = substitute_code(names, names.defs.empty() ? pure_import : "");
    if (code.empty()) continue;
    Candidate c;
    c.kind = Candidate::substitute;
    c.label = op + " (" + (names.defs.empty() ? pure_import : f.module + "'s pure-Python " + callee) + ")";
    c.fix.module = f.module;
    c.fix.function = names.next_definition;
    c.fix.is_class = names.next_is_class;
    c.fix.action = "insert-after";
    c.fix.code = code;
    c.fix.ensure_import = "import torch";
    c.fix.dist = f.dist;
    c.fix.version = f.version;
    c.fix.why = "dynamo traces " + (names.defs.empty() ? pure_import : f.module + "'s own pure-Python " + callee) +
                " where " + op + " (C) is called (torch.compiler.substitute_in_graph); eager runs still call " + op;
    c.fix.cost = "every compiled graph in the process computes " + op + " the way the library's pure-Python "
                 "definition does, traced: it must give what the C one gives (the proof compares compiled with eager "
                 "on this command's inputs)";
    c.shared = !shared_owner(s_.env, f.site_dir).empty();
    return c;
  }
  return std::nullopt;
}

}  // namespace sitepatch::engine
