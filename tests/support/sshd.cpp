#include "support/sshd.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "sitepatch/util/process.hpp"
#include "sitepatch/util/strings.hpp"

namespace testsupport {
namespace {

using sitepatch::util::run;

void must(const std::vector<std::string>& argv) {
  auto r = run(argv);
  if (r.status != 0)
    throw std::runtime_error(sitepatch::util::join(argv, " ") + " failed: " + r.out + r.err);
}

}  // namespace

TestSshd::TestSshd() {
  // One /30 per test process, so parallel tests never share addresses or names; a
  // process's later machines (a fleet) take the same /30 in 10.200/16, 10.201/16...
  static int instances = 0;
  int index = instances++;
  if (index > 55) throw std::runtime_error("TestSshd: at most 56 machines per test process (10.199/16 to 10.254/16)");
  int n = ::getpid() % 16000;
  std::string net = "10." + std::to_string(199 + index) + "." + std::to_string(n / 64) + ".";
  int base = (n % 64) * 4;
  host_address_ = net + std::to_string(base + 1);
  address_ = net + std::to_string(base + 2);
  std::string suffix = index == 0 ? "" : "x" + std::to_string(index);
  ns_ = "sitepatch-test-" + std::to_string(::getpid()) + suffix;
  veth_ = "spv" + std::to_string(::getpid()) + suffix;
  root_ = tmp_.path + "/srv";
  log_ = tmp_.path + "/sshd.log";
  std::string t = tmp_.path;
  spit(root_ + "/.keep", "");

  must({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", t + "/host_key"});
  must({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", t + "/client_key"});
  must({"ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", t + "/stranger_key"});
  spit(t + "/authorized_keys", slurp(t + "/client_key.pub"));
  spit(t + "/sshd_config",
       "ListenAddress " + address_ + "\n"
       "Port 22\n"
       "HostKey " + t + "/host_key\n"
       "AuthorizedKeysFile " + t + "/authorized_keys\n"
       "PermitRootLogin prohibit-password\n"
       "PasswordAuthentication no\n"
       "KbdInteractiveAuthentication no\n"
       "UsePAM no\n"
       "StrictModes no\n"
       "PidFile " + t + "/sshd.pid\n"
       "LogLevel VERBOSE\n"
       "MaxStartups 100\n"
       "MaxSessions 100\n"
       // The crash tests hand the agent their LD_PRELOAD shim through the client's SetEnv.
       "AcceptEnv LD_PRELOAD SITEPATCH_KILL_*\n");

  must({"ip", "netns", "add", ns_});
  must({"ip", "link", "add", veth_ + "a", "type", "veth", "peer", "name", veth_ + "b"});
  must({"ip", "link", "set", veth_ + "b", "netns", ns_});
  must({"ip", "addr", "add", host_address_ + "/30", "dev", veth_ + "a"});
  must({"ip", "link", "set", veth_ + "a", "up"});
  must({"ip", "netns", "exec", ns_, "ip", "addr", "add", address_ + "/30", "dev", veth_ + "b"});
  must({"ip", "netns", "exec", ns_, "ip", "link", "set", veth_ + "b", "up"});
  must({"ip", "netns", "exec", ns_, "ip", "link", "set", "lo", "up"});
  must({"mkdir", "-p", "/run/sshd"});

  // A machine of its own, not this one's shell setup: Debian's bash reads ~/.bashrc for a
  // command sshd runs, and a developer's (pyenv init: 116 ms of CPU and 0.36 s) was paid
  // by every ssh command of every remote test and of the fleet's plays (a fifth of the
  // suite's CPU at times, 2026-12-07). In sshd's own mount namespace only.
  std::string clean_rc;
  if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir) {
    std::string rc = std::string(pw->pw_dir) + "/.bashrc";
    if (::access(rc.c_str(), F_OK) == 0) {
      spit(t + "/bashrc", "");
      clean_rc = "mount --bind " + t + "/bashrc '" + rc + "' && ";
    }
  }
  pid_ = ::fork();
  if (pid_ == 0) {
    // sshd logs to its file; it must not hold the test's pipes open.
    int devnull = ::open("/dev/null", O_RDWR);
    ::dup2(devnull, 0);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    std::string script = "mount --make-rprivate / && mount --bind " + root_ + " /srv && " + clean_rc +
                         "exec /usr/sbin/sshd -D -E " + log_ + " -f " + t + "/sshd_config";
    ::execlp("ip", "ip", "netns", "exec", ns_.c_str(), "unshare", "-m", "sh", "-c", script.c_str(),
             (char*)nullptr);
    ::_exit(127);
  }
  // Ready when a client gets in.
  auto cmd = sitepatch::util::shell_split(ssh_command());
  cmd.insert(cmd.end(), {"-o", "ConnectTimeout=2", "-o", "BatchMode=yes", target(), "true"});
  for (int i = 0; i < 100; ++i) {
    if (run(cmd).status == 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw std::runtime_error("test sshd did not come up; log:\n" + (std::ifstream(log_) ? slurp(log_) : ""));
}

void TestSshd::stop() {
  auto pids = run({"ip", "netns", "pids", ns_});
  for (auto& p : sitepatch::util::split(pids.out, '\n'))
    if (!p.empty()) ::kill(std::stoi(p), SIGKILL);
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int st;
    ::waitpid(pid_, &st, 0);
    pid_ = -1;
  }
}

TestSshd::~TestSshd() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int st;
    ::waitpid(pid_, &st, 0);
  }
  // ip netns exec leaves sshd as its child; be sure nothing keeps the namespace.
  auto pids = run({"ip", "netns", "pids", ns_});
  for (auto& p : sitepatch::util::split(pids.out, '\n'))
    if (!p.empty()) ::kill(std::stoi(p), SIGKILL);
  run({"ip", "link", "del", veth_ + "a"});
  run({"ip", "netns", "del", ns_});
}

std::string TestSshd::ssh_command() const {
  return "ssh -i " + client_key() + " " + ssh_options();
}

std::string TestSshd::ssh_options() const {
  return "-F /dev/null -o IdentitiesOnly=yes -o UserKnownHostsFile=" + tmp_.path +
         "/known_hosts -o StrictHostKeyChecking=no -o LogLevel=ERROR";
}

std::string TestSshd::stranger_ssh_command() const {
  return "ssh -F /dev/null -i " + tmp_.path + "/stranger_key -o IdentitiesOnly=yes -o UserKnownHostsFile=" +
         tmp_.path + "/known_hosts -o StrictHostKeyChecking=no -o LogLevel=ERROR";
}

std::string TestSshd::local(const std::string& remote_path) const {
  if (remote_path.rfind("/srv", 0) != 0) throw std::runtime_error("not under /srv: " + remote_path);
  return root_ + remote_path.substr(4);
}

int TestSshd::connections() const {
  std::ifstream in(log_);
  int n = 0;
  for (std::string line; std::getline(in, line);)
    if (line.find("Connection from ") != std::string::npos) ++n;
  return n;
}

}  // namespace testsupport
