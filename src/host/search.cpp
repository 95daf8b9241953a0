// Host::search where the files are at hand: the folders listed, the lists read and
// filtered here. The agent answers the same question on its side (op_search), so that
// only the hits cross a connection.
#include <fnmatch.h>

#include "sitepatch/host/host.hpp"

namespace sitepatch::host {

bool name_matches(std::string_view pattern, std::string_view name) {
  return ::fnmatch(std::string(pattern).c_str(), std::string(name).c_str(), FNM_CASEFOLD) == 0;
}

std::string_view head_of(std::string_view text) {
  size_t blank = text.find("\n\n");
  size_t crlf = text.find("\n\r\n");
  if (crlf != std::string_view::npos && (blank == std::string_view::npos || crlf < blank)) return text.substr(0, crlf + 3);
  return blank == std::string_view::npos ? text : text.substr(0, blank + 2);
}

namespace {

std::string inside(const std::string& dir, const std::string& entry, const std::string& file) {
  return file.empty() ? dir + "/" + entry : dir + "/" + entry + "/" + file;
}

bool keeps_every_line(const std::vector<std::string>& needles) {
  for (auto& n : needles)
    if (n.empty()) return true;
  return false;
}

std::vector<EntryHit> search_one(Host& host, const EntryQuery& q) {
  auto listings = host.list_many(q.dirs);
  std::vector<EntryHit> cands;
  for (size_t k = 0; k < q.dirs.size() && k < listings.size(); ++k)
    for (auto& e : listings[k])
      for (auto& p : q.patterns)
        if (name_matches(p, e.name)) {
          cands.push_back({k, e.name, e.is_dir, {}, {}, {}});
          break;
        }
  std::vector<std::string> paths;
  for (auto& c : cands)
    for (auto& l : q.lists) paths.push_back(inside(q.dirs[c.dir], c.name, l));
  std::vector<FileData> lists;
  if (q.needles.empty()) {
    // Looked up only: whether each list is there.
    auto real = paths.empty() ? std::vector<std::optional<std::string>>{} : host.realpath(paths);
    for (size_t i = 0; i < paths.size(); ++i) {
      FileData f;
      f.path = paths[i];
      f.exists = i < real.size() && real[i].has_value();
      lists.push_back(std::move(f));
    }
  } else if (!paths.empty()) {
    lists = keeps_every_line(q.needles) ? host.read(paths) : host.read_lines(paths, q.needles);
  }
  std::vector<EntryHit> hits;
  for (size_t n = 0; n < cands.size(); ++n) {
    auto first = lists.begin() + n * q.lists.size();
    cands[n].lists.assign(first, first + q.lists.size());
    bool hit = q.needles.empty();
    for (auto& f : cands[n].lists) hit = hit || (f.exists && !f.is_dir && !f.content.empty());
    if (hit) hits.push_back(std::move(cands[n]));
  }
  std::vector<std::string> more;
  for (auto& h : hits) {
    for (auto& f : q.heads) more.push_back(inside(q.dirs[h.dir], h.name, f));
    for (auto& f : q.wholes) more.push_back(inside(q.dirs[h.dir], h.name, f));
  }
  auto read_more = more.empty() ? std::vector<FileData>{} : host.read(more);
  size_t at = 0;
  for (auto& h : hits) {
    for (size_t i = 0; i < q.heads.size(); ++i, ++at) {
      h.heads.push_back(std::move(read_more[at]));
      h.heads.back().content = std::string(head_of(h.heads.back().content));
    }
    for (size_t i = 0; i < q.wholes.size(); ++i, ++at) h.wholes.push_back(std::move(read_more[at]));
  }
  return hits;
}

}  // namespace

std::vector<std::vector<EntryHit>> Host::search(const std::vector<EntryQuery>& queries) {
  std::vector<std::vector<EntryHit>> out;
  for (auto& q : queries) out.push_back(search_one(*this, q));
  return out;
}

}  // namespace sitepatch::host
