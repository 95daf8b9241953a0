// [user@]host[:port] as users type it, checked so that nothing reaches ssh as an option.
#include <cctype>

#include "sitepatch/host/host.hpp"
#include "sitepatch/util/error.hpp"

namespace sitepatch::host {
namespace {

bool host_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' || c == ':' ||
         c == '%';
}

bool user_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' || c == '$';
}

}  // namespace

SshTarget SshTarget::parse(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return Error("--host `" + text + "`: " + why + " (expected [user@]host[:port])", Exit::usage);
  };
  SshTarget t;
  std::string rest = text;
  size_t at = rest.rfind('@');
  if (at != std::string::npos) {
    t.user = rest.substr(0, at);
    rest = rest.substr(at + 1);
    if (t.user.empty()) throw bad("empty user name");
    if (t.user[0] == '-') throw bad("a user name cannot start with '-'");
    for (char c : t.user)
      if (!user_char(c)) throw bad("a user name cannot contain `" + std::string(1, c) + "`");
  }
  if (!rest.empty() && rest[0] == '[') {
    size_t close = rest.find(']');
    if (close == std::string::npos) throw bad("unclosed [");
    t.host = rest.substr(1, close - 1);
    rest = rest.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') throw bad("unexpected text after ]");
      t.port = rest.substr(1);
    }
  } else {
    size_t colon = rest.find(':');
    t.host = rest.substr(0, colon);
    if (colon != std::string::npos) t.port = rest.substr(colon + 1);
  }
  if (t.host.empty()) throw bad("empty host name");
  if (t.host[0] == '-') throw bad("a host name cannot start with '-'");
  for (char c : t.host)
    if (!host_char(c)) throw bad("a host name cannot contain `" + std::string(1, c) + "`");
  if (!t.port.empty()) {
    for (char c : t.port)
      if (!std::isdigit(static_cast<unsigned char>(c))) throw bad("the port must be a number");
    if (t.port.size() > 5 || std::stoi(t.port) == 0 || std::stoi(t.port) > 65535)
      throw bad("the port must be 1 to 65535");
  }
  return t;
}

std::string SshTarget::str() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return (user.empty() ? "" : user + "@") + h + (port.empty() ? "" : ":" + port);
}

}  // namespace sitepatch::host
