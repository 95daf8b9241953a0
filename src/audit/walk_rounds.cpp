// The walk's rounds after each breadth-first pass (walker.hpp): overrides reached by
// dispatch, special methods Python calls without a call written, what callers pass, and
// the calls into modules the environment lacks.
#include "audit/walker.hpp"

#include <set>

namespace sitepatch::audit::walking {

void Walker::pass_arguments(const Node& caller, const Ref& ref, const Target& callee) {
  if (ref.values.empty()) return;
  const Function& G = callee.mod->functions[size_t(callee.index)];
  size_t offset = G.cls >= 0 && !G.self_name.empty() && !G.params.empty() && G.params[0] == G.self_name ? 1 : 0;
  auto& into = passed_[{callee.mod, callee.index}];
  for (const std::string& item : util::split(ref.values, ' ')) {
    size_t eq = item.find('=');
    if (eq == std::string::npos) continue;
    std::string slot = item.substr(0, eq), how = item.substr(eq + 1), name;
    if (slot[0] == '#') {
      size_t k = size_t(std::stoi(slot.substr(1))) + offset;
      if (k < G.params.size()) name = G.params[k];
    } else if (std::find(G.params.begin(), G.params.end(), slot) != G.params.end()) {
      name = slot;
    }
    if (name.empty() || name[0] == '*' || G.types.count(name) || into.count(name)) continue;
    if (util::starts_with(how, "of:") && how.find_first_of("()[]") == std::string::npos) {
      // `_setup_handlers(logging.StreamHandler)`: calling the parameter calls that.
      Target c = r_.in_scope(*caller.mod, caller.fn, how.substr(3));
      if (c.kind == Target::function || c.kind == Target::klass || c.kind == Target::external) {
        into[name + "()"] = c;
        if (c.kind != Target::external) continue;  // a function or class, not an instance
      }
    }
    Target v = util::starts_with(how, "call:") ? r_.instance(*caller.mod, caller.fn, how)
                                               : r_.value_of(*caller.mod, caller.fn, how.substr(3));
    if (v.kind != Target::klass && v.kind != Target::external) continue;
    v.exact = false;  // another caller may pass a subclass's instance
    into[name] = v;
  }
}

int Walker::reach(size_t id, const Key& key, int line, const Ref* ref, const std::string& via) {
  auto& calls = nodes_[id].calls;
  if (std::any_of(calls.begin(), calls.end(), [&](auto& c) { return c.key == key; })) return -1;
  calls.push_back({key, line, ref, via});
  if (ids_.count(key)) return -1;
  int lv = nodes_[id].level;
  if (o_.depth > 0 && lv + 1 >= o_.depth) {
    ++beyond_;
    return -1;
  }
  int n = int(nodes_.size());
  ids_[key] = n;
  nodes_.emplace_back(key, lv + 1, int(id), line);
  via_[n] = via;
  return n;
}

std::vector<int> Walker::dispatch_round() {
  bool any = std::any_of(nodes_.begin(), nodes_.end(), [](const Node& n) { return !n.dispatches.empty(); });
  if (!any) return {};
  find_subclasses();
  detail::SubclassIndex index(r_, [this] { load_wanted(); });
  std::vector<int> fresh;
  for (size_t id = 0; id < nodes_.size(); ++id) {
    for (size_t k = 0; k < nodes_[id].dispatches.size(); ++k) {
      Dispatch& d = nodes_[id].dispatches[k];
      auto found = index.overrides(*d.mod, d.cls, d.name);
      // The receiver's class is not known here: the overrides of the classes the walked
      // code makes; where it makes none of them, every one (and the step says so).
      std::vector<detail::Override> made;
      for (auto& o : found)
        if (int cls = o.mod->functions[size_t(o.fn)].cls; cls >= 0 && index.made(*o.mod, cls, instantiated_))
          made.push_back(o);
      std::string how = !found.empty() && made.empty() ? " (none of them is made in the walked code)" : "";
      if (!made.empty()) found = std::move(made);
      d.more = found.size() > kMaxOverrides ? found.size() - kMaxOverrides : 0;
      if (found.size() > kMaxOverrides) found.resize(kMaxOverrides);
      d.found = found.size();
      const int line = d.line;  // d is gone once nodes_ grows
      const Ref* ref = d.ref;
      // A subclass's override: what its self is below it is not known.
      for (auto& o : found)
        if (int n = reach(id, Key{o.mod, o.fn}, line, ref, "via subclass " + o.klass + how); n >= 0)
          fresh.push_back(n);
    }
  }
  return fresh;
}

std::vector<Walker::Definer> Walker::definers(bool truth) {
  std::vector<Definer> out;
  for (int pass = 0; pass < 2; ++pass) {
    bool waiting = false;
    out.clear();
    for (size_t id = 0; id < nodes_.size(); ++id)
      for (const Ref* ref : nodes_[id].implicits) {
        std::string dunder = last_name(ref->name);
        if (truth_test(dunder) != truth) continue;
        for (auto& [cm, ci] : instantiated_) {
          Target t = r_.method(*cm, ci, dunder);
          if (t.kind == Target::pending) waiting = true;
          if (t.kind == Target::function) out.push_back({id, ref, cm, ci, t});
        }
      }
    if (!waiting || r_.wanted.empty()) break;
    load_wanted();
  }
  return out;
}

std::vector<int> Walker::truth_round() {
  std::vector<int> fresh;
  for (const Definer& d : definers(true)) {
    std::string via = "via " + last_name(d.ref->name) + " of " + d.cm->name + "." +
                      d.cm->classes[size_t(d.ci)].qualified + ", made in the walked code";
    if (int n = reach(d.id, Key{d.method.mod, d.method.index, d.cm, d.ci}, d.ref->line, d.ref, via); n >= 0)
      fresh.push_back(n);
  }
  return fresh;
}

void Walker::unfollowed_implicits() {
  std::map<std::pair<size_t, const Ref*>, std::set<std::string>> candidates;
  for (const Definer& d : definers(false))
    candidates[{d.id, d.ref}].insert(d.cm->name + "." + d.cm->classes[size_t(d.ci)].qualified);
  // Walking into each of them gave chains no run takes (`with self.lock:` into any
  // __exit__ the program defines): the call is counted instead, naming them.
  for (auto& [at, classes] : candidates) {
    Node& n = nodes_[at.first];
    std::string dunder = last_name(at.second->name);
    std::string named = *classes.begin() + (classes.size() > 1 ? " and " + std::to_string(classes.size() - 1) + " more" : "");
    n.unresolved.push_back(Unresolved{n.mod->name + ":" + n.mod->functions[size_t(n.fn)].qualified, n.mod->file,
                                      n.mod->root, at.second->line, at.second->name,
                                      "the class of its receiver is not known; " + named + ", made in the walked code, " +
                                          (classes.size() > 1 ? "define " : "defines ") + dunder,
                                      false, ""});
    n.unresolved_refs.push_back(at.second);
  }
}

void Walker::find_subclasses() {
  std::set<std::string> packages, names;
  for (const Node& n : nodes_) {
    packages.insert(n.mod->name.substr(0, n.mod->name.find('.')));
    for (const Dispatch& d : n.dispatches) names.insert(last_name(d.mod->classes[size_t(d.cls)].qualified));
  }
  for (int generation = 0; generation < 4 && !names.empty(); ++generation) {
    // One question for every package (a remote host reads them all in one go).
    std::vector<std::string> fresh;
    for (const std::string& n : names)
      for (const std::string& pkg : packages)
        if (searched_.insert(pkg + "\n" + n).second) {
          fresh.push_back(n);
          break;
        }
    if (fresh.empty()) return;
    for (const std::string& m : source_.subclassing({packages.begin(), packages.end()}, fresh))
      if (!r_.modules.count(m)) r_.wanted.insert(m);
    load_wanted();
    std::set<std::string> next;
    for (auto& [name, m] : r_.modules)
      if (m)
        for (const Class& c : m->classes)
          for (const std::string& b : c.bases)
            if (names.count(last_name(b))) next.insert(last_name(c.qualified));
    for (const std::string& n : names) next.erase(n);
    names = std::move(next);
  }
}

void Walker::unfollowed_dispatches() {
  for (Node& n : nodes_) {
    std::string who = n.mod->name + ":" + n.mod->functions[n.fn].qualified;
    for (const Dispatch& d : n.dispatches) {
      std::string method = d.mod->name + "." + d.mod->classes[size_t(d.cls)].qualified + "." + d.name;
      if (d.abstract && d.found == 0) {
        n.unresolved.push_back(Unresolved{who, n.mod->file, n.mod->root, d.line, d.call,
                                          "abstract method " + method + ": no subclass the walk read overrides it",
                                          false, ""});
        n.unresolved_refs.push_back(d.ref);
      }
      if (d.more > 0) {
        n.unresolved.push_back(Unresolved{who, n.mod->file, n.mod->root, d.line, d.call,
                                          std::to_string(d.more) + " more overrides of " + method +
                                              " not followed (the first " + std::to_string(kMaxOverrides) +
                                              " were)",
                                          true, ""});
        n.unresolved_refs.push_back(d.ref);
      }
    }
  }
}

void Walker::missing_modules() {
  std::set<std::string> tops;
  for (const Node& n : nodes_)
    for (auto& [ref, name] : n.externals) {
      std::string top = name.substr(0, name.find('.'));
      auto it = r_.modules.find(top);
      if (it == r_.modules.end() || !it->second) tops.insert(top);
    }
  if (tops.empty()) return;
  auto absent = source_.not_installed({tops.begin(), tops.end()});
  std::set<std::string> gone(absent.begin(), absent.end());
  if (gone.empty()) return;
  for (Node& n : nodes_) {
    const Function& F = n.mod->functions[n.fn];
    for (auto& [ref, name] : n.externals) {
      std::string top = name.substr(0, name.find('.'));
      if (!gone.count(top)) continue;
      n.unresolved.push_back(Unresolved{n.mod->name + ":" + F.qualified, n.mod->file, n.mod->root, ref->line,
                                        ref->name, "module " + top + " is not installed", false, top});
      n.unresolved_refs.push_back(ref);
    }
  }
}
}  // namespace sitepatch::audit::walking
