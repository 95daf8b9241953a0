// AgentClient's answers read ahead (Host::prefetch): a read, list_many or realpath posted
// before it is needed, its answer kept when it comes and handed out once, by the next
// read, list_many or realpath of the same path; a write or remove drops what it made stale.
#include <algorithm>
#include <iterator>

#include "host/agent_client.hpp"
#include "host/agent_client_impl.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::host {

using nlohmann::json;

std::set<std::string>& AgentClient::pending_of(Ahead kind) {
  return kind == Ahead::read ? reading_ahead_ : kind == Ahead::list ? listing_ahead_ : resolving_ahead_;
}

void AgentClient::keep(const Posted& p, const json& reply) {
  auto store = [&p](auto answers, auto& kept) {
    if (answers.size() != p.keys.size()) return;  // not an answer to it: asked again when needed
    for (size_t i = 0; i < answers.size(); ++i) kept[p.keys[i]] = std::move(answers[i]);
  };
  try {
    if (p.op == "lock")
      for (auto& t : reply.value("earlier", json::array()))
        if (t.is_string()) unfinished_.push_back(t.get<std::string>());
    if (p.ahead == Ahead::read) store(files_of(reply), read_ahead_);
    else if (p.ahead == Ahead::list) store(lists_of(reply), listed_ahead_);
    else if (p.ahead == Ahead::real) store(paths_of(reply), resolved_ahead_);
  } catch (const json::exception&) {
    // A reply of another shape is dropped the same way.
  } catch (const std::invalid_argument&) {
    // So are bytes that are not base64.
  }
}

void AgentClient::prefetch(const ReadAhead& what) {
  if (failed_) return;
  auto fresh = [](const std::vector<std::string>& keys, const auto& kept, std::set<std::string>& pending) {
    std::vector<std::string> out;
    for (auto& k : keys)
      if (!kept.count(k) && pending.insert(k).second) out.push_back(k);
    return out;
  };
  auto ask = [this](Ahead kind, const char* op, const char* key, std::vector<std::string> keys) {
    if (keys.empty()) return;
    post({{"op", op}, {key, keys}}, false);
    posted_.back().ahead = kind;
    posted_.back().keys = std::move(keys);
  };
  ask(Ahead::read, "read", "paths", fresh(what.files, read_ahead_, reading_ahead_));
  ask(Ahead::list, "list_many", "dirs", fresh(what.dirs, listed_ahead_, listing_ahead_));
  ask(Ahead::real, "realpath", "paths", fresh(what.realpaths, resolved_ahead_, resolving_ahead_));
}

template <class T>
std::vector<T> AgentClient::ahead_or_ask(const std::vector<std::string>& keys, std::map<std::string, T>& kept,
                                         std::set<std::string>& pending,
                                         const std::function<std::vector<T>(const std::vector<std::string>&)>& ask) {
  std::map<std::string, T> got;
  auto fetch = [&](bool skip_pending) {
    std::vector<std::string> missing;
    std::set<std::string> once;
    for (auto& k : keys)
      if (!kept.count(k) && !got.count(k) && !(skip_pending && pending.count(k)) && once.insert(k).second)
        missing.push_back(k);
    if (missing.empty()) return false;
    auto answers = ask(missing);  // the answers read ahead come in this same wait
    for (size_t i = 0; i < missing.size() && i < answers.size(); ++i) got[missing[i]] = std::move(answers[i]);
    return true;
  };
  if (!fetch(true) && std::any_of(keys.begin(), keys.end(), [&](auto& k) { return pending.count(k) > 0; })) {
    drain();
    ++round_trips_;
    if (failed_) std::rethrow_exception(failed_);
  }
  fetch(false);  // what a failed read ahead did not answer
  std::vector<T> out;
  for (auto& k : keys) {
    auto it = kept.find(k);
    out.push_back(it != kept.end() ? it->second : got.at(k));
  }
  for (auto& k : keys) kept.erase(k);
  return out;
}

void AgentClient::drop_ahead(const std::vector<std::string>& paths) {
  // A write may make the file and its folders: every folder above it may list a new
  // entry, and the real paths of it and of them may now exist.
  auto above = [](const std::string& p, const std::string& dir) {
    return dir == "/" ? p.size() > 1 && p[0] == '/' : util::starts_with(p, dir + "/");
  };
  for (auto& p : paths) {
    read_ahead_.erase(p);
    for (auto it = listed_ahead_.begin(); it != listed_ahead_.end();)
      it = above(p, it->first) ? listed_ahead_.erase(it) : std::next(it);
    for (auto it = resolved_ahead_.begin(); it != resolved_ahead_.end();)
      it = p == it->first || above(p, it->first) ? resolved_ahead_.erase(it) : std::next(it);
  }
}

std::vector<FileData> AgentClient::read(const std::vector<std::string>& paths) {
  return ahead_or_ask<FileData>(paths, read_ahead_, reading_ahead_,
                                [this](const std::vector<std::string>& p) { return ask_read(p); });
}

std::vector<std::vector<DirEntry>> AgentClient::list_many(const std::vector<std::string>& dirs) {
  return ahead_or_ask<std::vector<DirEntry>>(dirs, listed_ahead_, listing_ahead_,
                                             [this](const std::vector<std::string>& d) { return ask_list_many(d); });
}

std::vector<std::optional<std::string>> AgentClient::realpath(const std::vector<std::string>& paths) {
  return ahead_or_ask<std::optional<std::string>>(
      paths, resolved_ahead_, resolving_ahead_,
      [this](const std::vector<std::string>& p) { return ask_realpath(p); });
}

}  // namespace sitepatch::host
