#include "engine/python_answer.hpp"

namespace sitepatch::engine::detail {

nlohmann::json python_answer(Session& s, const char* script, const std::string& arg, const std::string& mark,
                             host::CommandResult* raw) {
  host::CommandRun run;
  run.capture = true;
  run.argv = {s.env.python, "-I", "-B", "-c", script, arg};
  host::CommandResult r = s.host.run_command(run);
  size_t at = r.out.rfind(mark);
  nlohmann::json j;
  if (at != std::string::npos) {
    size_t end = r.out.find('\n', at);
    j = nlohmann::json::parse(r.out.substr(at + mark.size(), end == std::string::npos ? end : end - at - mark.size()),
                              nullptr, false);
    if (j.is_discarded()) j = nullptr;
  }
  if (raw) *raw = std::move(r);
  return j;
}

}  // namespace sitepatch::engine::detail
