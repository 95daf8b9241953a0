#pragma once
// What agent_client.cpp (the child and the protocol), agent_read_ahead.cpp (answers read
// before they are asked for) and agent_ops.cpp (each operation's request and reply)
// share; private to src/host/.
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "host/agent_client.hpp"
#include "sitepatch/util/error.hpp"

namespace sitepatch::host {

/// `j[key]` if it is a string, else "".
inline std::string str_or_empty(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

template <class F>
auto AgentClient::shaped(const char* op, F&& read) -> decltype(read()) {
  try {
    return read();
  } catch (const nlohmann::json::exception&) {
  } catch (const std::invalid_argument&) {  // base64_decode
  }
  throw Error(who_ + ": the sitepatch agent broke the protocol: its answer to `" + op +
              "` does not have the expected shape");
}

}  // namespace sitepatch::host
