// AgentClient's operations: each one's request, and its reply taken apart into the
// Host's types (a reply of another shape is the agent's broken protocol, through
// `shaped`), over AgentClient::call.
#include <cstdint>

#include "host/agent_client.hpp"
#include "host/agent_client_impl.hpp"
#include "sitepatch/util/error.hpp"
#include "sitepatch/util/hash.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::host {

using nlohmann::json;

CommandResult AgentClient::run_command(const CommandRun& run) {
  json r = call({{"op", "run"},
                 {"argv", run.argv},
                 {"files", run.files},
                 {"env", run.env},
                 {"path_first", run.path_first},
                 {"path_first_dirs", run.path_first_dirs}});
  return shaped("run", [&] {
    CommandResult out;
    out.status = r.at("status").get<int>();
    out.out = r.at("out").get<std::string>();
    out.err = r.at("err").get<std::string>();
    out.seconds = r.value("seconds", 0.0);
    return out;
  });
}

std::vector<CommandResult> AgentClient::run_commands(const std::vector<CommandRun>& runs, int jobs) {
  json items = json::array();
  for (auto& run : runs)
    items.push_back({{"argv", run.argv},
                     {"files", run.files},
                     {"env", run.env},
                     {"path_first", run.path_first},
                     {"path_first_dirs", run.path_first_dirs}});
  json r = call({{"op", "run_many"}, {"runs", items}, {"jobs", jobs}});
  auto out = shaped("run_many", [&] {
    std::vector<CommandResult> results;
    for (auto& x : r.at("results")) {
      CommandResult c;
      c.status = x.at("status").get<int>();
      c.out = x.at("out").get<std::string>();
      c.err = x.at("err").get<std::string>();
      c.seconds = x.value("seconds", 0.0);
      results.push_back(std::move(c));
    }
    return results;
  });
  if (out.size() != runs.size()) throw Error(who_ + ": the sitepatch agent lost command results");
  return out;
}

std::vector<bool> AgentClient::importable(const std::vector<std::string>& modules) {
  json r = call({{"op", "importable"}, {"modules", modules}});
  std::vector<bool> out = shaped("importable", [&] {
    std::vector<bool> found;
    for (auto& f : r.at("found")) found.push_back(f.is_boolean() && f.get<bool>());
    return found;
  });
  if (out.size() != modules.size()) throw Error(who_ + ": the agent answered importable for other modules");
  return out;
}

std::vector<CompileResult> AgentClient::compile(const std::vector<CompileRequest>& sources) {
  json files = json::array();
  for (auto& s : sources)
    files.push_back({{"label", s.label}, {"source_b64", util::base64_encode(s.source)}});
  json r = call({{"op", "compile"}, {"files", files}});
  auto out = shaped("compile", [&] {
    std::vector<CompileResult> results;
    for (auto& x : r.at("results")) {
      CompileResult c;
      c.ok = x.value("ok", false);
      c.line = x.value("line", 0);
      c.column = x.value("column", 0);
      // Shown to the user as the environment's Python's verdict.
      c.message = util::printable_lines(str_or_empty(x, "message"));
      c.reason = util::printable_lines(str_or_empty(x, "reason"));
      results.push_back(std::move(c));
    }
    return results;
  });
  if (out.size() != sources.size()) throw Error(who_ + ": the sitepatch agent lost compile results");
  return out;
}

std::vector<FileData> AgentClient::ask_read(const std::vector<std::string>& paths) {
  json r = call({{"op", "read"}, {"paths", paths}});
  auto files = shaped("read", [&] { return files_of(r); });
  if (files.size() != paths.size()) throw Error(who_ + ": the sitepatch agent lost files it was asked to read");
  return files;
}

std::vector<FileStat> AgentClient::stat(const std::vector<std::string>& paths) {
  json r = call({{"op", "stat"}, {"paths", paths}});
  auto out = shaped("stat", [&] {
    std::vector<FileStat> stats;
    for (auto& f : r.at("files")) {
      FileStat st;
      st.path = f.at("path").get<std::string>();
      st.exists = f.at("exists").get<bool>();
      st.is_file = f.value("is_file", false);
      st.size = f.value("size", uint64_t(0));
      st.mtime_ns = f.value("mtime_ns", int64_t(0));
      stats.push_back(std::move(st));
    }
    return stats;
  });
  if (out.size() != paths.size()) throw Error(who_ + ": the sitepatch agent lost files it was asked about");
  return out;
}

std::vector<FileData> AgentClient::read_lines(const std::vector<std::string>& paths,
                                              const std::vector<std::string>& needles) {
  json r = call({{"op", "read_lines"}, {"paths", paths}, {"needles", needles}});
  return shaped("read_lines", [&] { return files_of(r); });
}

std::vector<std::vector<EntryHit>> AgentClient::search(const std::vector<EntryQuery>& queries) {
  json qs = json::array();
  for (auto& q : queries)
    qs.push_back({{"dirs", q.dirs}, {"patterns", q.patterns}, {"lists", q.lists}, {"needles", q.needles},
                  {"heads", q.heads}, {"wholes", q.wholes}});
  json r = call({{"op", "search"}, {"queries", qs}});
  return shaped("search", [&] { return hits_of(r, queries); });
}

std::vector<std::vector<EntryHit>> AgentClient::hits_of(const json& r, const std::vector<EntryQuery>& queries) {
  std::vector<std::vector<EntryHit>> out;
  for (auto& answer : r.at("answers")) {
    if (out.size() == queries.size()) break;
    const EntryQuery& q = queries[out.size()];
    out.emplace_back();
    for (auto& x : answer) {
      EntryHit h;
      h.dir = x.value("dir", size_t(0));
      h.name = str_or_empty(x, "name");
      h.is_dir = x.value("is_dir", false);
      h.lists = files_of(x, "lists");
      h.heads = files_of(x, "heads");
      h.wholes = files_of(x, "wholes");
      // A reply that does not fit the question would misplace rows: refuse it.
      if (h.dir >= q.dirs.size() || h.lists.size() != q.lists.size() || h.heads.size() != q.heads.size() ||
          h.wholes.size() != q.wholes.size())
        throw Error(who_ + ": the sitepatch agent answered a search with a reply that does not fit it");
      out.back().push_back(std::move(h));
    }
  }
  if (out.size() != queries.size()) throw Error(who_ + ": the sitepatch agent lost search answers");
  return out;
}

std::vector<std::vector<DirEntry>> AgentClient::lists_of(const nlohmann::json& r) {
  std::vector<std::vector<DirEntry>> out;
  for (auto& entries : r.at("lists")) {
    out.emplace_back();
    for (auto& x : entries) out.back().push_back({str_or_empty(x, "name"), x.value("is_dir", false)});
  }
  return out;
}

std::vector<std::optional<std::string>> AgentClient::paths_of(const nlohmann::json& r) {
  std::vector<std::optional<std::string>> out;
  for (auto& x : r.at("paths"))
    out.push_back(x.is_string() ? std::optional<std::string>(x.get<std::string>()) : std::nullopt);
  return out;
}

std::vector<FileData> AgentClient::files_of(const nlohmann::json& r, const char* key) {
  std::vector<FileData> out;
  for (auto& x : r.at(key)) {
    FileData f;
    f.path = str_or_empty(x, "path");
    f.exists = x.value("exists", false);
    f.is_dir = x.value("is_dir", false);
    f.mode = x.value("mode", 0u);
    f.nlink = x.value("nlink", 0ul);
    f.content = util::base64_decode(str_or_empty(x, "content_b64"));
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<DirEntry> AgentClient::list(const std::string& dir) {
  json r = call({{"op", "list"}, {"dir", dir}});
  return shaped("list", [&] {
    std::vector<DirEntry> out;
    for (auto& x : r.at("entries")) out.push_back({str_or_empty(x, "name"), x.value("is_dir", false)});
    return out;
  });
}

std::vector<std::vector<DirEntry>> AgentClient::ask_list_many(const std::vector<std::string>& dirs) {
  json r = call({{"op", "list_many"}, {"dirs", dirs}});
  auto out = shaped("list_many", [&] { return lists_of(r); });
  if (out.size() != dirs.size()) throw Error(who_ + ": the sitepatch agent lost folders it was asked to list");
  return out;
}

std::optional<std::map<std::string, std::string>> AgentClient::snapshot(
    const std::string& dir, const std::vector<std::string>& skip, const std::map<std::string, std::string>& have) {
  json hashes = json::object();
  for (auto& [rel, bytes] : have) hashes[rel] = util::sha256_hex(bytes);
  json r = call({{"op", "snapshot"}, {"dir", dir}, {"skip", skip}, {"have", hashes}});
  return shaped("snapshot", [&]() -> std::optional<std::map<std::string, std::string>> {
    if (!r.value("exists", false)) return std::nullopt;
    std::map<std::string, std::string> files;
    for (auto& x : r.at("files")) {
      std::string rel = str_or_empty(x, "rel");
      auto mine = have.find(rel);
      if (x.value("same", false) && mine != have.end())
        files[rel] = mine->second;
      else
        files[rel] = util::base64_decode(str_or_empty(x, "content_b64"));
    }
    return files;
  });
}

std::vector<std::optional<std::string>> AgentClient::ask_realpath(const std::vector<std::string>& paths) {
  json r = call({{"op", "realpath"}, {"paths", paths}});
  auto out = shaped("realpath", [&] { return paths_of(r); });
  if (out.size() != paths.size()) throw Error(who_ + ": the sitepatch agent lost paths it was asked to resolve");
  return out;
}

void AgentClient::write(const std::vector<WriteRequest>& files) {
  json list = json::array();
  for (auto& f : files)
    list.push_back({{"path", f.path},
                    {"content_b64", util::base64_encode(f.content)},
                    {"expected_sha256", f.expected_sha256},
                    {"within", f.within}});
  std::vector<std::string> paths;
  for (auto& f : files) paths.push_back(f.path);
  try {
    call({{"op", "write"}, {"files", list}, {"tag", tag_}});
  } catch (...) {
    drop_ahead(paths);  // some may have been written
    throw;
  }
  drop_ahead(paths);
}

void AgentClient::remove(const std::vector<std::string>& paths) {
  try {
    call({{"op", "remove"}, {"paths", paths}});
  } catch (...) {
    drop_ahead(paths);
    throw;
  }
  drop_ahead(paths);
}

}  // namespace sitepatch::host
