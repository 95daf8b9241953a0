#pragma once
// What the benchmarks share: medians, and quoting for the Ansible files they write.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

namespace benchsupport {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

inline std::string regex_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::string("\\.^$|?*+()[]{}").find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

// Seconds of CPU the whole machine has spent busy since boot (/proc/stat's first line,
// less idle and iowait): the difference across a run counts the sshd, the remote shells
// and the agents too, which the client's own rusage misses.
inline double machine_busy_seconds() {
  std::ifstream stat("/proc/stat");
  std::string cpu;
  stat >> cpu;
  long long total = 0, idle = 0, v = 0;
  for (int i = 0; i < 8 && stat >> v; ++i) {
    total += v;
    if (i == 3 || i == 4) idle += v;
  }
  return double(total - idle) / double(::sysconf(_SC_CLK_TCK));
}

// YAML double-quoted scalar (a single-quoted one would fold its line breaks).
inline std::string sq(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out + "\"";
}

}  // namespace benchsupport
