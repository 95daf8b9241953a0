#include "host/agent_client.hpp"

#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>

#include "sitepatch/util/file.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/error.hpp"
#include "sitepatch/util/process.hpp"
#include "sitepatch/util/strings.hpp"
#include "sitepatch_agent_source.hpp"

namespace sitepatch::host {
namespace {

constexpr int kProtocol = 5;

// The longest reply line read. Replies that carry files' bytes or a command's output
// are as long as those (a file may be 64 MB, its base64 a third more, and a read asks
// for many): they get a larger bound. Either way the far side cannot make this
// process hold more than that.
constexpr size_t kMaxReply = util::Process::kMaxLine;
constexpr size_t kMaxBulkReply = size_t(512) << 20;
// Of what is printed before the agent's first reply, this much is kept for a message.
constexpr size_t kStrayKept = 64 << 10;

size_t reply_bound(const std::string& op) {
  for (const char* bulk : {"read", "read_lines", "search", "snapshot", "run"})
    if (op == bulk) return kMaxBulkReply;
  return kMaxReply;
}

using nlohmann::json;

std::string str_or_empty(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

class AgentLock : public Lock {
 public:
  AgentLock(AgentClient& client, std::string path) : client_(client), path_(std::move(path)) {}
  std::vector<std::string> unfinished() override {
    client_.confirm();  // the lock's answer names them
    return client_.unfinished_;
  }
  ~AgentLock() override {
    try {
      client_.post({{"op", "unlock"}, {"path", path_}}, false);
    } catch (...) {
      // The agent is gone; its exit released the lock.
    }
  }

 private:
  AgentClient& client_;
  std::string path_;
};

std::vector<std::string> agent_argv(const std::string& python) {
  // -u: replies are not held in a buffer. -I (not -S): the site folders are still the
  // real ones, but nothing of the caller's folder or PYTHON* variables runs.
  return {python, "-I", "-u", "-c", embedded::agent_source};
}

std::string changed_since_read(const std::string& path, const std::string& expected,
                               const std::string& found) {
  return path + " changed since it was read (expected sha256 " +
         (expected.empty() ? "none (a new file)" : expected) + ", found " +
         (found.empty() ? "no file" : found) + "); nothing was written";
}

std::string lock_held(const std::string& path) {
  return "another sitepatch is working on this environment (lock " + path +
         " held); try again later";
}

AgentClient::AgentClient(const std::vector<std::string>& argv, std::string who)
    : proc_(std::make_unique<util::Process>(argv)), who_(std::move(who)), tag_(util::random_name(8)) {}

AgentClient::AgentClient(const std::vector<std::string>& argv, std::string who,
                         const std::string& preamble, Explain explain)
    : AgentClient(argv, std::move(who)) {
  explain_ = std::move(explain);
  try {
    proc_->write(preamble);
  } catch (const Error&) {
    died("could not be started");
  }
}

AgentClient::~AgentClient() = default;

void AgentClient::finish() { proc_->close_input(); }

void AgentClient::died(const std::string& what) {
  int status = proc_->wait();
  std::string msg = who_ + ": the sitepatch agent " + what + " (exit status " +
                    std::to_string(status) + ")";
  std::string stray = stray_;
  if (stray_dropped_) stray += "[" + std::to_string(stray_dropped_) + " more bytes of output left out]\n";
  // Bound for a terminal: escape sequences in it would be the far side's to play.
  std::string err = util::printable_lines(util::trim(stray + proc_->stderr_text()));
  if (explain_) {
    std::string better = explain_(status, err);
    if (!better.empty()) throw Error(better);
  }
  // 96: the agent's own refusal of a Python older than it supports; it says which.
  if (status == 96 && !err.empty()) throw Error(who_ + ": " + err);
  if (!err.empty()) msg += ":\n" + err;
  throw Error(msg);
}

void AgentClient::broke(const std::string& what) {
  try {
    throw Error(who_ + ": the sitepatch agent broke the protocol: " + what);
  } catch (const Error&) {
    broken_ = std::current_exception();
    throw;
  }
}

template <class F>
auto AgentClient::shaped(const char* op, F&& read) -> decltype(read()) {
  try {
    return read();
  } catch (const json::exception&) {
  } catch (const std::invalid_argument&) {  // base64_decode
  }
  throw Error(who_ + ": the sitepatch agent broke the protocol: its answer to `" + op +
              "` does not have the expected shape");
}

size_t AgentClient::send(const json& request) {
  // replace: a stray non-UTF-8 byte in a path must not abort the whole request.
  std::string text = request.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  try {
    proc_->write(text);
  } catch (const Error&) {
    died("stopped reading requests");
  }
  return text.size();
}

json AgentClient::receive(const Posted& p) {
  if (broken_) std::rethrow_exception(broken_);
  std::string line;
  for (;;) {
    size_t bound = reply_bound(p.op);
    bool got;
    try {
      got = proc_->read_line(line, bound);
    } catch (const Error&) {
      broke("its answer to `" + p.op + "` is longer than " + std::to_string(bound >> 20) +
            " MB, the most sitepatch reads");
    }
    if (!got) died("stopped answering");
    // Only whole JSON objects are replies; anything else was printed before the
    // agent took over stdout (by a .pth file, say): keep it for the error message.
    if (!line.empty() && line[0] == '{') break;
    size_t room = kStrayKept - std::min(kStrayKept, stray_.size());
    if (line.size() + 1 <= room) {
      stray_ += line + "\n";
    } else {
      stray_ += line.substr(0, room);
      stray_dropped_ += line.size() + 1 - room;
    }
  }
  if (spdlog::should_log(spdlog::level::trace))
    spdlog::trace("agent: {}{} took {:.1f} ms, sent {} B, received {} B", p.op,
                  p.ahead == Ahead::none ? "" : " (read ahead)",
                  std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - p.sent).count(),
                  p.sent_bytes, line.size() + 1);
  json reply = json::parse(line, nullptr, false);
  if (reply.is_discarded() || !reply.is_object())
    broke("its answer to `" + p.op + "` is not JSON: " + util::printable(line.substr(0, 200)) +
          (line.size() > 200 ? "..." : ""));
  auto ok = reply.find("ok");
  if (ok == reply.end() || !ok->is_boolean())
    throw Error(who_ + ": the sitepatch agent broke the protocol: its answer to `" + p.op + "` has no `ok` of true or false");
  if (!ok->get<bool>()) {
    // The agent's words, escaped: the far side's text must not steer this terminal.
    std::string error = util::printable_lines(str_or_empty(reply, "error"));
    if (error.empty()) error = who_ + ": the sitepatch agent failed at `" + p.op + "` without saying why";
    if (reply.contains("partial") && reply["partial"].is_array()) {
      std::vector<std::string> changed;
      for (auto& p : reply["partial"])
        if (p.is_string()) changed.push_back(p.get<std::string>());
      throw PartialWriteError(error, changed);
    }
    throw Error(error);
  }
  return reply;
}

void AgentClient::drain() {
  while (!posted_.empty()) {
    Posted p = std::move(posted_.front());
    posted_.pop_front();
    try {
      keep(p, receive(p));
    } catch (const Error&) {
      if (broken_) throw;  // nothing after it can be read
      // A read ahead that failed is asked again when it is needed, and fails there.
      if (p.checked && !failed_) failed_ = std::current_exception();
    }
    if (p.ahead != Ahead::none)
      for (auto& k : p.keys) pending_of(p.ahead).erase(k);
  }
}

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

void AgentClient::post(const json& request, bool checked) {
  auto sent = std::chrono::steady_clock::now();
  size_t n = send(request);
  posted_.push_back({request.value("op", std::string("?")), checked, n, sent, Ahead::none, {}});
}

void AgentClient::confirm() {
  // Only a lock's answer is worth a wait; an unlock's is read with the next request's.
  if (std::any_of(posted_.begin(), posted_.end(), [](const Posted& q) { return q.checked; })) {
    drain();
    ++round_trips_;
  }
  if (failed_) std::rethrow_exception(failed_);
}

json AgentClient::call(const json& request) {
  if (broken_) std::rethrow_exception(broken_);
  if (failed_) std::rethrow_exception(failed_);
  Posted p{request.value("op", std::string("?")), true, 0, std::chrono::steady_clock::now(), Ahead::none, {}};
  // What changes files goes out only once the lock it needs is known to be held.
  if (p.op == "write" || p.op == "remove") confirm();
  p.sent_bytes = send(request);
  drain();
  json reply;
  try {
    reply = receive(p);
  } catch (const Error&) {
    if (failed_ && !broken_) std::rethrow_exception(failed_);  // the lock's refusal explains the rest
    throw;
  }
  ++round_trips_;  // counted once answered: none yet means ssh never got in (SshHost::explain)
  if (failed_) std::rethrow_exception(failed_);
  return reply;
}

site::Environment AgentClient::hello() {
  json r = call({{"op", "hello"}, {"protocol", kProtocol}});
  return shaped("hello", [&] { return environment_of(r); });
}

site::Environment AgentClient::environment_of(const json& r) {
  if (r.value("protocol", 0) != kProtocol)
    throw Error(who_ + ": the sitepatch agent speaks protocol " +
                util::printable(r.value("protocol", json(0)).dump()) + ", expected " + std::to_string(kProtocol));
  site::Environment env;
  env.python = str_or_empty(r, "python");
  env.prefix = str_or_empty(r, "prefix");
  env.base_prefix = str_or_empty(r, "base_prefix");
  env.version = str_or_empty(r, "version");
  env.cache_tag = str_or_empty(r, "cache_tag");
  for (auto& d : r.value("site_dirs", json::array())) env.site_dirs.push_back(d.get<std::string>());
  for (auto& d : r.value("pth_dirs", json::array())) env.pth_dirs.push_back(d.get<std::string>());
  env.dpkg = r.value("dpkg", false);
  for (auto& n : r.value("notes", json::array()))
    if (n.is_string()) spdlog::warn("{}: {}", who_, util::printable(n.get<std::string>()));
  for (auto& b : r.value("builtins", json::array()))
    if (b.is_string()) env.builtins.push_back(b.get<std::string>());
  for (auto& m : r.value("stdlib", json::array()))
    if (m.is_string()) env.stdlib.push_back(m.get<std::string>());
  std::sort(env.stdlib.begin(), env.stdlib.end());
  if (auto c = r.find("cpus"); c != r.end() && c->is_number_integer()) env.cpus = std::max(0, c->get<int>());
  return env;
}

CommandResult AgentClient::run_command(const CommandRun& run) {
  json r = call({{"op", "run"},
                 {"argv", run.argv},
                 {"files", run.files},
                 {"env", run.env},
                 {"path_first", run.path_first},
                 {"path_first_dirs", run.path_first_dirs}});
  return shaped("run", [&] {
    CommandResult out;
    out.status = r.at("status").get<int>();
    out.out = r.at("out").get<std::string>();
    out.err = r.at("err").get<std::string>();
    out.seconds = r.value("seconds", 0.0);
    return out;
  });
}

std::vector<CommandResult> AgentClient::run_commands(const std::vector<CommandRun>& runs, int jobs) {
  json items = json::array();
  for (auto& run : runs)
    items.push_back({{"argv", run.argv},
                     {"files", run.files},
                     {"env", run.env},
                     {"path_first", run.path_first},
                     {"path_first_dirs", run.path_first_dirs}});
  json r = call({{"op", "run_many"}, {"runs", items}, {"jobs", jobs}});
  auto out = shaped("run_many", [&] {
    std::vector<CommandResult> results;
    for (auto& x : r.at("results")) {
      CommandResult c;
      c.status = x.at("status").get<int>();
      c.out = x.at("out").get<std::string>();
      c.err = x.at("err").get<std::string>();
      c.seconds = x.value("seconds", 0.0);
      results.push_back(std::move(c));
    }
    return results;
  });
  if (out.size() != runs.size()) throw Error(who_ + ": the sitepatch agent lost command results");
  return out;
}

std::vector<bool> AgentClient::importable(const std::vector<std::string>& modules) {
  json r = call({{"op", "importable"}, {"modules", modules}});
  std::vector<bool> out = shaped("importable", [&] {
    std::vector<bool> found;
    for (auto& f : r.at("found")) found.push_back(f.is_boolean() && f.get<bool>());
    return found;
  });
  if (out.size() != modules.size()) throw Error(who_ + ": the agent answered importable for other modules");
  return out;
}

std::vector<CompileResult> AgentClient::compile(const std::vector<CompileRequest>& sources) {
  json files = json::array();
  for (auto& s : sources)
    files.push_back({{"label", s.label}, {"source_b64", util::base64_encode(s.source)}});
  json r = call({{"op", "compile"}, {"files", files}});
  auto out = shaped("compile", [&] {
    std::vector<CompileResult> results;
    for (auto& x : r.at("results")) {
      CompileResult c;
      c.ok = x.value("ok", false);
      c.line = x.value("line", 0);
      c.column = x.value("column", 0);
      // Shown to the user as the environment's Python's verdict.
      c.message = util::printable_lines(str_or_empty(x, "message"));
      c.reason = util::printable_lines(str_or_empty(x, "reason"));
      results.push_back(std::move(c));
    }
    return results;
  });
  if (out.size() != sources.size()) throw Error(who_ + ": the sitepatch agent lost compile results");
  return out;
}

std::vector<FileData> AgentClient::read(const std::vector<std::string>& paths) {
  return ahead_or_ask<FileData>(paths, read_ahead_, reading_ahead_,
                                [this](const std::vector<std::string>& p) { return ask_read(p); });
}

std::vector<FileData> AgentClient::ask_read(const std::vector<std::string>& paths) {
  json r = call({{"op", "read"}, {"paths", paths}});
  auto files = shaped("read", [&] { return files_of(r); });
  if (files.size() != paths.size()) throw Error(who_ + ": the sitepatch agent lost files it was asked to read");
  return files;
}

std::vector<FileStat> AgentClient::stat(const std::vector<std::string>& paths) {
  json r = call({{"op", "stat"}, {"paths", paths}});
  auto out = shaped("stat", [&] {
    std::vector<FileStat> stats;
    for (auto& f : r.at("files")) {
      FileStat st;
      st.path = f.at("path").get<std::string>();
      st.exists = f.at("exists").get<bool>();
      st.is_file = f.value("is_file", false);
      st.size = f.value("size", uint64_t(0));
      st.mtime_ns = f.value("mtime_ns", int64_t(0));
      stats.push_back(std::move(st));
    }
    return stats;
  });
  if (out.size() != paths.size()) throw Error(who_ + ": the sitepatch agent lost files it was asked about");
  return out;
}

std::vector<FileData> AgentClient::read_lines(const std::vector<std::string>& paths,
                                              const std::vector<std::string>& needles) {
  json r = call({{"op", "read_lines"}, {"paths", paths}, {"needles", needles}});
  return shaped("read_lines", [&] { return files_of(r); });
}

std::vector<std::vector<EntryHit>> AgentClient::search(const std::vector<EntryQuery>& queries) {
  json qs = json::array();
  for (auto& q : queries)
    qs.push_back({{"dirs", q.dirs}, {"patterns", q.patterns}, {"lists", q.lists}, {"needles", q.needles},
                  {"heads", q.heads}, {"wholes", q.wholes}});
  json r = call({{"op", "search"}, {"queries", qs}});
  return shaped("search", [&] { return hits_of(r, queries); });
}

std::vector<std::vector<EntryHit>> AgentClient::hits_of(const json& r, const std::vector<EntryQuery>& queries) {
  std::vector<std::vector<EntryHit>> out;
  for (auto& answer : r.at("answers")) {
    if (out.size() == queries.size()) break;
    const EntryQuery& q = queries[out.size()];
    out.emplace_back();
    for (auto& x : answer) {
      EntryHit h;
      h.dir = x.value("dir", size_t(0));
      h.name = str_or_empty(x, "name");
      h.is_dir = x.value("is_dir", false);
      h.lists = files_of(x, "lists");
      h.heads = files_of(x, "heads");
      h.wholes = files_of(x, "wholes");
      // A reply that does not fit the question would misplace rows: refuse it.
      if (h.dir >= q.dirs.size() || h.lists.size() != q.lists.size() || h.heads.size() != q.heads.size() ||
          h.wholes.size() != q.wholes.size())
        throw Error(who_ + ": the sitepatch agent answered a search with a reply that does not fit it");
      out.back().push_back(std::move(h));
    }
  }
  if (out.size() != queries.size()) throw Error(who_ + ": the sitepatch agent lost search answers");
  return out;
}

std::vector<std::vector<DirEntry>> AgentClient::lists_of(const nlohmann::json& r) {
  std::vector<std::vector<DirEntry>> out;
  for (auto& entries : r.at("lists")) {
    out.emplace_back();
    for (auto& x : entries) out.back().push_back({str_or_empty(x, "name"), x.value("is_dir", false)});
  }
  return out;
}

std::vector<std::optional<std::string>> AgentClient::paths_of(const nlohmann::json& r) {
  std::vector<std::optional<std::string>> out;
  for (auto& x : r.at("paths"))
    out.push_back(x.is_string() ? std::optional<std::string>(x.get<std::string>()) : std::nullopt);
  return out;
}

std::vector<FileData> AgentClient::files_of(const nlohmann::json& r, const char* key) {
  std::vector<FileData> out;
  for (auto& x : r.at(key)) {
    FileData f;
    f.path = str_or_empty(x, "path");
    f.exists = x.value("exists", false);
    f.is_dir = x.value("is_dir", false);
    f.mode = x.value("mode", 0u);
    f.nlink = x.value("nlink", 0ul);
    f.content = util::base64_decode(str_or_empty(x, "content_b64"));
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<DirEntry> AgentClient::list(const std::string& dir) {
  json r = call({{"op", "list"}, {"dir", dir}});
  return shaped("list", [&] {
    std::vector<DirEntry> out;
    for (auto& x : r.at("entries")) out.push_back({str_or_empty(x, "name"), x.value("is_dir", false)});
    return out;
  });
}

std::vector<std::vector<DirEntry>> AgentClient::list_many(const std::vector<std::string>& dirs) {
  return ahead_or_ask<std::vector<DirEntry>>(dirs, listed_ahead_, listing_ahead_,
                                             [this](const std::vector<std::string>& d) { return ask_list_many(d); });
}

std::vector<std::vector<DirEntry>> AgentClient::ask_list_many(const std::vector<std::string>& dirs) {
  json r = call({{"op", "list_many"}, {"dirs", dirs}});
  auto out = shaped("list_many", [&] { return lists_of(r); });
  if (out.size() != dirs.size()) throw Error(who_ + ": the sitepatch agent lost folders it was asked to list");
  return out;
}

std::optional<std::map<std::string, std::string>> AgentClient::snapshot(
    const std::string& dir, const std::vector<std::string>& skip, const std::map<std::string, std::string>& have) {
  json hashes = json::object();
  for (auto& [rel, bytes] : have) hashes[rel] = util::sha256_hex(bytes);
  json r = call({{"op", "snapshot"}, {"dir", dir}, {"skip", skip}, {"have", hashes}});
  return shaped("snapshot", [&]() -> std::optional<std::map<std::string, std::string>> {
    if (!r.value("exists", false)) return std::nullopt;
    std::map<std::string, std::string> files;
    for (auto& x : r.at("files")) {
      std::string rel = str_or_empty(x, "rel");
      auto mine = have.find(rel);
      if (x.value("same", false) && mine != have.end())
        files[rel] = mine->second;
      else
        files[rel] = util::base64_decode(str_or_empty(x, "content_b64"));
    }
    return files;
  });
}

std::vector<std::optional<std::string>> AgentClient::realpath(const std::vector<std::string>& paths) {
  return ahead_or_ask<std::optional<std::string>>(
      paths, resolved_ahead_, resolving_ahead_,
      [this](const std::vector<std::string>& p) { return ask_realpath(p); });
}

std::vector<std::optional<std::string>> AgentClient::ask_realpath(const std::vector<std::string>& paths) {
  json r = call({{"op", "realpath"}, {"paths", paths}});
  auto out = shaped("realpath", [&] { return paths_of(r); });
  if (out.size() != paths.size()) throw Error(who_ + ": the sitepatch agent lost paths it was asked to resolve");
  return out;
}

void AgentClient::write(const std::vector<WriteRequest>& files) {
  json list = json::array();
  for (auto& f : files)
    list.push_back({{"path", f.path},
                    {"content_b64", util::base64_encode(f.content)},
                    {"expected_sha256", f.expected_sha256},
                    {"within", f.within}});
  std::vector<std::string> paths;
  for (auto& f : files) paths.push_back(f.path);
  try {
    call({{"op", "write"}, {"files", list}, {"tag", tag_}});
  } catch (...) {
    drop_ahead(paths);  // some may have been written
    throw;
  }
  drop_ahead(paths);
}

void AgentClient::remove(const std::vector<std::string>& paths) {
  try {
    call({{"op", "remove"}, {"paths", paths}});
  } catch (...) {
    drop_ahead(paths);
    throw;
  }
  drop_ahead(paths);
}

std::unique_ptr<Lock> AgentClient::lock(const std::string& path, int timeout_ms, LockMode mode) {
  // Posted: the requests after it (the history's snapshot) go in the same wait. With no
  // state folder the agent holds nothing ("none"), and the unlock is a no-op there.
  post({{"op", "lock"}, {"path", path}, {"timeout_ms", timeout_ms}, {"shared", mode == LockMode::shared},
        {"tag", tag_}},
       true);
  return std::make_unique<AgentLock>(*this, path);
}

}  // namespace sitepatch::host
