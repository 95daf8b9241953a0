// An abstract method called on a receiver known only by its class: the overrides of the
// subclasses some reached code makes; when none is made, once the fixpoint is reached, the
// subclasses across the class's package (a plugin's backend nothing here imports), said so.
#include <algorithm>

#include "audit/flow/solver_impl.hpp"

namespace sitepatch::audit::flow {

// An abstract method (@abstractmethod, or a body that only raises NotImplementedError) of
// a receiver whose class is all that is known of it: the overrides of the subclasses some
// reached code makes run. Not every subclass read: on torch that made one entry 4 times
// slower (serialization.load, 4.5 s against 1.3 s), and read nothing more of the code.
void Solver::Impl::dispatch_abstract(uint32_t cls, const std::string& name, uint32_t found, uint32_t dst,
                                     uint32_t instr, int line) {
  bool abstract = false;
  for (uint32_t f : pts(found))
    if (values[f].kind == Kind::function && scope(values[f].a).abstract) abstract = true;
  if (!abstract) return;
  std::vector<std::pair<uint32_t, uint32_t>> made;  // subclass, its method's variable
  for (uint32_t d : std::vector<uint32_t>(constructed.begin(), constructed.end())) {
    if (d == cls) continue;
    auto order = mro(d, instr);
    if (std::find(order.begin(), order.end(), cls) == order.end()) continue;
    auto own = find_in_mro(d, name, instr);
    if (own && own->second != found) made.push_back({d, own->second});
  }
  for (auto [d, var] : made) bind_into(var, value(Kind::instance, d), true, dst, instr, line);
  // None made overrides it: what runs is not known.
  auto [cm, cl] = classes[cls];
  if (made.empty()) {
    abstract_unfollowed.emplace(dst, "abstract method " + modules[cm].ir.name + "." +
                                         modules[cm].ir.classes[cl].qualified + "." + name +
                                         ": no subclass the walk read overrides it");
    if (unmade_seen.insert({cls, name, dst}).second) unmade.push_back({cls, found, dst, instr, name, line});
  } else {
    abstract_unfollowed.erase(dst);
  }
}

namespace {
// Modules read to find them, at most: a package of a few backends is what this is for. Where
// more may subclass (torch's many), reading them and their imports cost an entry 4 times its
// time and found nothing; the calls stay ones not followed.
constexpr size_t kFarModules = 8;
constexpr size_t kFarOverrides = 8;  // overrides one call is sent to, at most
}  // namespace

// The calls no made subclass answers (those answered by subclasses found a round before
// too: a subclass of theirs may be found next). By index: sending may add to `unmade`.
std::vector<size_t> Solver::Impl::unmade_pending() const {
  std::vector<size_t> out;
  for (size_t k = 0; k < unmade.size(); ++k)
    if (abstract_unfollowed.count(unmade[k].dst) || far_sent.count(unmade[k].dst)) out.push_back(k);
  return out;
}

bool Solver::Impl::far_read() {
  auto pending = unmade_pending();
  if (pending.empty()) return false;
  // Where to look: the packages of the classes, for class statements naming them or a
  // subclass found a round before.
  std::set<std::string> packages, names;
  for (size_t k : pending) {
    const Unmade* u = &unmade[k];
    auto [m, local] = classes[u->cls];
    packages.insert(modules[m].ir.name.substr(0, modules[m].ir.name.find('.')));
    for (uint32_t d = 0; d < classes.size(); ++d) {
      auto order = mro(d, kNoInstr);
      if (std::find(order.begin(), order.end(), u->cls) == order.end()) continue;
      const std::string& q = modules[classes[d].module].ir.classes[classes[d].local].qualified;
      names.insert(q.substr(q.rfind('.') == std::string::npos ? 0 : q.rfind('.') + 1));
    }
  }
  std::vector<std::string> fresh;
  for (auto& n : names)
    if (far_asked.insert(n).second) fresh.push_back(n);
  if (fresh.empty()) return false;
  std::vector<std::string> unread;
  for (auto& mod : source.subclassing({packages.begin(), packages.end()}, fresh))
    if (!module_index.count(mod)) unread.push_back(mod);
  if (far_read_count + unread.size() > kFarModules) return false;
  far_read_count += unread.size();
  bool more = false;
  for (auto& mod : unread) {
    int m = load(mod);
    if (m < 0) continue;
    reach_top(uint32_t(m));
    more = true;
  }
  return more;
}

bool Solver::Impl::far_send() {
  // The classes' bases read through `from m import Base` are forced now, the fixpoint
  // done: what that adds is moved at once (flush), so the MROs below see it.
  auto pending = unmade_pending();
  if (pending.empty()) return false;
  for (uint32_t d = 0; d < classes.size(); ++d) mro(d, kNoInstr);
  flush();
  bool sent = false;
  for (size_t k : pending) {
    const Unmade u = unmade[k];
    std::vector<std::pair<uint32_t, uint32_t>> found;
    for (uint32_t d = 0; d < classes.size() && found.size() <= kFarOverrides; ++d) {
      if (d == u.cls) continue;
      auto order = mro(d, kNoInstr);
      if (std::find(order.begin(), order.end(), u.cls) == order.end()) continue;
      auto own = find_in_mro(d, u.name, kNoInstr);
      if (own && own->second != u.found) found.push_back({d, own->second});
    }
    // More than a few: which one runs is anyone's guess, and sending to all costs more
    // than it tells; the call stays one not followed.
    if (found.empty() || found.size() > kFarOverrides) continue;
    for (auto [d, var] : found) {
      far_made.insert(d);
      bind_into(var, value(Kind::instance, d), true, u.dst, u.instr, u.line);
    }
    abstract_unfollowed.erase(u.dst);
    far_sent.insert(u.dst);
    sent = true;
  }
  return sent;
}

}  // namespace sitepatch::audit::flow
