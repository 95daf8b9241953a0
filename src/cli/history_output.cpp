// How a history entry reads in `log -p` and `show COMMIT`: git's medium format (commit,
// author, date, the message indented), then the diff it made to the files.
#include "commands.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::cli {

void print_entry(const Output& o, const store::LogEntry& e) {
  o.out(o.paint("commit " + e.oid, Paint::warn));
  o.out("Author: " + e.author);
  o.out("Date:   " + format_time(e.time));
  o.out("");
  std::string message = e.message;
  while (!message.empty() && message.back() == '\n') message.pop_back();
  for (auto& line : util::split(message, '\n')) o.out(line.empty() ? "" : "    " + line);
  o.out("");
  o.diff(e.diff);
}

nlohmann::json entry_json(const store::LogEntry& e, bool diff) {
  nlohmann::json j = {{"commit", e.oid}, {"time", e.time}, {"author", e.author}, {"summary", e.summary},
                      {"message", e.message}};
  if (diff) j["diff"] = e.diff;
  return j;
}

}  // namespace sitepatch::cli
