#pragma once
// What the benchmarks share: medians, and quoting for the Ansible files they write.
#include <algorithm>
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
