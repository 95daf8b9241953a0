#pragma once
// A throwaway remote machine for tests: a real OpenSSH sshd in its own network
// namespace (reached over a veth pair) and its own mount namespace, where `root_dir`
// on this machine is mounted at /srv. /srv/... therefore exists only for processes
// that came in through ssh: code that reads remote files through the local disk fails.
// Keys are made for the run; everything is removed by the destructor.
#include <string>

#include "support/fixture.hpp"

namespace testsupport {

class TestSshd {
 public:
  TestSshd();
  ~TestSshd();
  TestSshd(const TestSshd&) = delete;
  TestSshd& operator=(const TestSshd&) = delete;

  /// "root@10.x.y.z" for --host.
  std::string target() const { return "root@" + address_; }
  const std::string& address() const { return address_; }
  /// --ssh-command that uses the run's key and known_hosts and no user config.
  std::string ssh_command() const;
  /// Its parts, as an Ansible inventory wants them: the key, and the other options.
  std::string client_key() const { return tmp_.path + "/client_key"; }
  std::string ssh_options() const;
  /// The same client with a key sshd does not accept.
  std::string stranger_ssh_command() const;
  /// This machine's view of the remote /srv.
  std::string local(const std::string& remote_path) const;
  /// How many connections sshd accepted so far (from its log).
  int connections() const;
  const std::string& log_path() const { return log_; }
  /// The network namespace sshd runs in: killing every process in it (`ip netns pids`)
  /// takes the machine off the network, its open connections with it.
  const std::string& netns() const { return ns_; }
  /// Kills every process in the namespace now (the destructor still cleans up).
  void stop();

 private:
  TempDir tmp_;
  std::string ns_, veth_, address_, host_address_, root_, log_;
  int pid_ = -1;
};

}  // namespace testsupport
