// How an outside name reads when no code of it is read: a function, or an exception class.
#include <cctype>
#include <string>

#include "audit/flow/solver_impl.hpp"

namespace sitepatch::audit::flow {

bool callable_name(const std::string& dotted) {
  std::string last = dotted.substr(dotted.rfind('.') + 1);
  if (last.empty() || !std::islower(static_cast<unsigned char>(last[0]))) return false;
  static const char* const kModules[] = {"os.path", "os", "sys", "subprocess", "shutil", "pathlib", "io"};
  for (const char* m : kModules)
    if (dotted == m) return false;
  return dotted.find('.') != std::string::npos;
}

bool exception_name(const std::string& dotted) {
  std::string last = dotted.substr(dotted.rfind('.') + 1);
  auto ends = [&](const char* s) {
    std::string e(s);
    return last.size() > e.size() && last.compare(last.size() - e.size(), e.size(), e) == 0;
  };
  return ends("Error") || ends("Exception") || ends("Warning") || ends("Exit") || last == "StopIteration" ||
         last == "KeyboardInterrupt";
}

}  // namespace sitepatch::audit::flow
