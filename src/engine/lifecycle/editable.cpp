// Editable installs (pip install -e): the "installed" files are the user's source
// checkout, found through a .pth file. Patching them would edit a working tree under
// version control, which is what git is for: plan says so and apply refuses, even
// with --system. pip records the checkout in the distribution's direct_url.json
// (PEP 610, `dir_info.editable`); setuptools' older `develop` leaves a <name>.egg-link.
#include <nlohmann/json.hpp>

#include "engine/internal.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine::detail {
namespace {

struct Checkout {
  std::string dir;   // the source folder
  std::string dist;  // "name==version", or the egg-link's name
};

std::string path_of_file_url(const std::string& url) {
  const std::string scheme = "file://";
  if (!util::starts_with(url, scheme)) return "";
  std::string path = url.substr(scheme.size());
  if (!util::starts_with(path, "/")) return "";  // file://host/... is not this machine's
  // Percent-escapes: %20 and friends, as pip writes them.
  std::string out;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 2 < path.size() && std::isxdigit(static_cast<unsigned char>(path[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(path[i + 2]))) {
      out += static_cast<char>(std::stoi(path.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += path[i];
    }
  }
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

std::vector<Checkout> checkouts(Session& s) {
  std::vector<std::string> paths;
  std::vector<std::string> labels;
  // Only the dist-infos whose direct_url.json says editable, asked where they are.
  host::EntryQuery q;
  q.dirs = s.env.site_dirs;
  q.patterns = {"*.dist-info"};
  q.lists = {"direct_url.json"};
  q.needles = {"editable"};
  q.heads = {"METADATA"};
  host::EntryQuery links;  // setuptools' older way: NAME.egg-link holds the folder
  links.dirs = s.env.site_dirs;
  links.patterns = {"*.egg-link"};
  auto hits = s.host.search({q, links});  // one round trip
  for (auto& h : hits[0]) {
    auto [name, version] = site::parse_metadata(h.heads[0].content);
    paths.push_back(q.dirs[h.dir] + "/" + h.name + "/direct_url.json");
    labels.push_back(name + "==" + version);
  }
  size_t direct = paths.size();
  for (auto& e : hits[1])
    if (!e.is_dir) {
      paths.push_back(links.dirs[e.dir] + "/" + e.name);
      labels.push_back(e.name.substr(0, e.name.size() - 9));
    }
  std::vector<Checkout> out;
  auto files = s.host.read(paths);
  for (size_t i = 0; i < files.size(); ++i) {
    if (!files[i].exists || files[i].is_dir) continue;
    std::string dir;
    if (i < direct) {
      auto doc = nlohmann::json::parse(files[i].content, nullptr, false);
      if (!doc.is_object() || !doc.contains("dir_info") || !doc["dir_info"].is_object()) continue;
      if (!doc["dir_info"].value("editable", false) || !doc.contains("url") || !doc["url"].is_string()) continue;
      dir = path_of_file_url(doc["url"].get<std::string>());
    } else {
      dir = util::trim(files[i].content.substr(0, files[i].content.find('\n')));
    }
    if (!dir.empty() && dir[0] == '/') out.push_back({dir, labels[i]});
  }
  return out;
}

}  // namespace

std::vector<std::string> editable_files(Session& s, const Plan& p) {
  // Only a folder a .pth file adds can be someone's checkout.
  bool any = false;
  for (auto& fc : p.files)
    for (auto& d : s.env.pth_dirs) any = any || d == fc.site_dir;
  if (!any) return {};
  std::vector<std::string> out;
  auto found = checkouts(s);
  for (auto& fc : p.files)
    for (auto& c : found)
      if (site::is_within(fc.path, c.dir)) {
        out.push_back(fc.path + " is in " + c.dir + ", the source checkout of " + c.dist +
                      " (installed editable, pip install -e): patching it would edit that working tree; "
                      "change the code there instead");
        break;
      }
  return out;
}

}  // namespace sitepatch::engine::detail
