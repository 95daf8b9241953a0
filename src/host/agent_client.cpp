// AgentClient's child and protocol: it starts the agent, sends a request a line and reads
// the replies in order (posted ones first), turns a refusal, a death or a broken protocol
// into the message users read, and checks the protocol at hello. The lock is posted, not
// waited for. Each operation's request and reply are in agent_ops.cpp; answers read
// ahead of their use in agent_read_ahead.cpp.
#include "host/agent_client.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <spdlog/spdlog.h>

#include "host/agent_client_impl.hpp"
#include "sitepatch/util/file.hpp"
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

std::string last_line(const std::string& text) {
  auto at = text.find_last_of('\n');
  return at == std::string::npos ? text : text.substr(at + 1);
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
  // -u: replies are not held in a buffer. -I: nothing of the caller's folder or PYTHON*
  // variables runs. -S: the agent checks the site folders, then runs site itself.
  return {python, "-I", "-S", "-u", "-c", embedded::agent_source};
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

namespace {

std::chrono::steady_clock::duration reply_quiet() {
  const char* v = std::getenv("SITEPATCH_REPLY_TIMEOUT");
  double s = v && *v ? std::atof(v) : 0;
  if (s <= 0) s = 45;
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}

std::string seconds_text(std::chrono::steady_clock::duration d) {
  double s = std::chrono::duration<double>(d).count();
  char buf[32];
  std::snprintf(buf, sizeof buf, s == double(long(s)) ? "%.0f s" : "%.1f s", s);
  return buf;
}

}  // namespace

AgentClient::AgentClient(const std::vector<std::string>& argv, std::string who)
    : proc_(std::make_unique<util::Process>(argv)),
      who_(std::move(who)),
      quiet_(reply_quiet()),
      heard_(std::chrono::steady_clock::now()),
      tag_(util::random_name(8)) {}

void AgentClient::arm() { proc_->set_deadline(heard_ + quiet_); }

void AgentClient::timed_out(const std::string& waiting_for) {
  std::string err = util::printable_lines(util::trim(stray_ + proc_->stderr_text()));
  std::string msg = answered_ ? who_ + ": the sitepatch agent went silent: no answer to `" + waiting_for +
                                    "` and no sign of work for " + seconds_text(quiet_)
                              : who_ + ": the sitepatch agent did not start: no hello within " + seconds_text(quiet_);
  msg += " (SITEPATCH_REPLY_TIMEOUT sets the bound)";
  if (!err.empty()) msg += "; it printed:\n" + (err.size() > 2000 ? err.substr(err.size() - 2000) : err);
  try {
    throw Error(msg);
  } catch (const Error&) {
    broken_ = std::current_exception();
    throw;
  }
}

AgentClient::AgentClient(const std::vector<std::string>& argv, std::string who,
                         const std::string& preamble, Explain explain)
    : AgentClient(argv, std::move(who)) {
  explain_ = std::move(explain);
  try {
    arm();
    proc_->write(preamble);
  } catch (const util::Timeout&) {
    timed_out("hello");
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
  // 95: a folder the environment's Python would import from is another user's to
  // change (agent/trust.py): its last line names the folder and the remedy.
  if (status == 95 && !err.empty()) throw Error(last_line(err));
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

size_t AgentClient::send(const json& request) {
  // replace: a stray non-UTF-8 byte in a path must not abort the whole request.
  std::string text = request.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  // A request starts a new wait: the time this process spent on its own work since the
  // last reply is no silence of the agent's.
  if (answered_) heard_ = std::chrono::steady_clock::now();
  try {
    arm();
    proc_->write(text);
  } catch (const util::Timeout&) {
    timed_out(request.value("op", "?"));
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
      arm();
      got = proc_->read_line(line, bound);
    } catch (const util::Timeout&) {
      timed_out(p.op);
    } catch (const Error&) {
      broke("its answer to `" + p.op + "` is longer than " + std::to_string(bound >> 20) +
            " MB, the most sitepatch reads");
    }
    if (!got) died("stopped answering");
    if (line == "~" && answered_) {  // a heartbeat: the operation is still at work
      heard_ = std::chrono::steady_clock::now();
      continue;
    }
    // Only whole JSON objects are replies; anything else was printed before the
    // agent took over stdout (by a .pth file, say): keep it for the error message.
    if (!line.empty() && line[0] == '{') {
      heard_ = std::chrono::steady_clock::now();
      answered_ = true;
      break;
    }
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
  json r = call({{"op", "hello"},
                 {"protocol", kProtocol},
                 {"beat", std::chrono::duration<double>(quiet_).count() / 4}});
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
  for (auto& x : r.value("ext_suffixes", json::array()))
    if (x.is_string() && x.get<std::string>().find('/') == std::string::npos)
      env.ext_suffixes.push_back(x.get<std::string>());
  for (auto& b : r.value("builtins", json::array()))
    if (b.is_string()) env.builtins.push_back(b.get<std::string>());
  for (auto& m : r.value("stdlib", json::array()))
    if (m.is_string()) env.stdlib.push_back(m.get<std::string>());
  std::sort(env.stdlib.begin(), env.stdlib.end());
  if (auto c = r.find("cpus"); c != r.end() && c->is_number_integer()) env.cpus = std::max(0, c->get<int>());
  return env;
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
