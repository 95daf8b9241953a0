// The entry of a value-flow audit: a module's top level or one of its functions, found
// where the module defines it or through the name it re-exports; when there is none, an
// error that says what the name is instead and the nearest names there are.
#include "audit/flow/graph.hpp"

#include "sitepatch/util/error.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::audit::flow {

namespace {

// `from x import f` at the module's top level: where its `f` comes from (x, f), if so.
std::optional<std::pair<std::string, std::string>> reexport(const Module& m, const std::string& name) {
  auto g = m.globals.find(name);
  if (g == m.globals.end() || m.scopes.empty()) return std::nullopt;
  for (const Instr& in : m.scopes[0].code)
    if (in.op == Op::import_from && in.dst != kNoVar && in.name2 == name) return std::make_pair(in.name, in.name2);
  return std::nullopt;
}

[[noreturn]] void no_module(ModuleTexts& texts, const WalkOptions& o) {
  if (!o.function.empty()) {
    auto near = util::nearest(o.module, texts.siblings(o.module));
    throw Error("module `" + o.module + "` not found in the environment" +
                (near.empty() ? "" : "; did you mean " + util::join(near, ", ") + "?"));
  }
  // MODULE alone that is no module: the nearest entry it may mean (pkg.mod.func).
  std::string near;
  for (size_t dot = o.module.rfind('.'); dot != std::string::npos && dot > 0; dot = o.module.rfind('.', dot - 1)) {
    if (!texts.text(o.module.substr(0, dot))) continue;
    near = o.module.substr(0, dot) + ":" + o.module.substr(dot + 1);
    break;
  }
  if (near.empty()) {
    auto siblings = util::nearest(o.module, texts.siblings(o.module));
    if (!siblings.empty()) near = util::join(siblings, ", ");
  }
  throw Error("entry `" + o.module + "`: no module `" + o.module + "` in the environment" +
                  (near.empty() ? std::string("; an entry is MODULE or MODULE:FUNCTION, e.g. "
                                              "flashinfer.fp4_quantization:fp4_quantize")
                                : "; did you mean " + near + "?"),
              Exit::usage);
}

[[noreturn]] void no_function(const Module& m, const WalkOptions& o) {
  std::string where = " in module " + o.module + " (" + m.file + ")";
  for (const Class& c : m.classes)
    if (c.qualified == o.function)
      throw Error("`" + o.function + "`" + where + " is a class; name one of its methods (" + o.function +
                  ".__init__, ...)");
  if (m.globals.count(o.function))
    throw Error("`" + o.function + "`" + where + " is a variable, not a function defined with def");
  std::vector<std::string> names;
  for (const Scope& s : m.scopes)
    if (s.kind == Scope::function) names.push_back(s.qualified);
  auto near = util::nearest(o.function, names);
  throw Error("function `" + o.function + "` is not defined" + where +
              (near.empty() ? "" : "; did you mean " + util::join(near, ", ") + "?"));
}

}  // namespace

std::optional<Module> Lowering::load(const std::string& name) {
  std::optional<ModuleText> t = texts_.text(name);
  if (!t) return std::nullopt;
  if (!t->compiled.empty()) {
    compiled_[name] = {t->compiled, t->file};
    return std::nullopt;
  }
  Module m;
  if (t->namespace_package) {
    m.name = name;
    m.is_package = true;
    m.scopes.emplace_back();
  } else {
    m = lower_kept(t->source, name, t->is_package);
  }
  m.file = t->file;
  m.root = t->root;
  // What its top level imports is what is read next, mostly: one batch for all of it. Not
  // an import under a test (`if TYPE_CHECKING:`, a platform's arm): rarely run, and a text
  // read ahead is held until asked for (12 of the 80 MB of get_cpp_compiler's walk were
  // texts never asked for).
  std::vector<std::string> next;
  for (const Instr& in : m.scopes.empty() ? std::vector<Instr>{} : m.scopes[0].code) {
    if (in.op != Op::import && in.op != Op::import_from && in.op != Op::star_import) continue;
    if (in.guard != 0) continue;
    if (in.name.empty() || in.name[0] == '<' || in.name == "builtins") continue;
    next.push_back(in.name);
    if (in.op == Op::import_from && !in.name2.empty()) next.push_back(in.name + "." + in.name2);
  }
  if (!next.empty()) texts_.prefetch(next);
  return m;
}

WalkOptions enter(Solver& solver, ModuleTexts& texts, const WalkOptions& options) {
  if (options.function.empty()) {
    if (!solver.enter_module(options.module)) no_module(texts, options);
    return options;
  }
  WalkOptions at = options;
  // A function a module re-exports is entered where it is defined (a few hops at most).
  for (int hops = 0; hops < 8; ++hops) {
    if (solver.enter_function(at.module, at.function, hops == 0 ? at.line : 0)) return at;
    auto t = texts.text(at.module);
    if (!t || !t->compiled.empty()) {
      if (hops == 0) no_module(texts, options);
      break;
    }
    Module m = t->namespace_package ? Module{} : lower(t->source, at.module, t->is_package);
    m.file = t->file;
    auto from = reexport(m, at.function);
    if (!from) {
      if (hops == 0) no_function(m, options);
      break;
    }
    at.module = from->first;
    at.function = from->second;
  }
  throw Error("`" + options.function + "` in module " + options.module + " is imported from " + at.module +
              ", which has no function `" + at.function + "` this audit can read");
}

}  // namespace sitepatch::audit::flow
