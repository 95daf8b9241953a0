#include "engine/edits/unbound.hpp"

#include <algorithm>
#include <map>

#include <spdlog/spdlog.h>

#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine::detail {

std::map<size_t, std::vector<python::FreeName>> free_names_by_edit(const python::Module& result, const std::string& rel,
                                                              const std::vector<EditSpan>& spans,
                                                              const std::vector<std::string>& builtins) {
  std::map<size_t, std::vector<python::FreeName>> out;
  std::vector<std::pair<size_t, size_t>> ranges;
  for (const auto& s : spans) ranges.emplace_back(s.begin, s.end);
  auto free = result.free_names(ranges, builtins);
  if (!free) {
    spdlog::info("plan: names new code uses cannot be checked in {}: a star import, globals() or exec", rel);
    return out;
  }
  for (const auto& f : *free)
    for (const auto& s : spans)
      if (s.begin <= f.offset && f.offset < s.end) {
        out[s.edit].push_back(f);  // free_names() reports each name once
        break;
      }
  return out;
}

namespace {

// The import that binds `name`: by the aliases the scientific Python world agrees on
// (`np` is numpy, not a module named np), else the module of that name.
std::string import_for(const std::string& name) {
  static const std::map<std::string, std::string> kAliases = {
      {"np", "import numpy as np"},
      {"pd", "import pandas as pd"},
      {"plt", "import matplotlib.pyplot as plt"},
      {"F", "import torch.nn.functional as F"},
      {"nn", "from torch import nn"},
      {"tf", "import tensorflow as tf"},
      {"jnp", "import jax.numpy as jnp"},
      {"sp", "import scipy as sp"},
      {"npt", "import numpy.typing as npt"},
  };
  auto it = kAliases.find(name);
  return it != kAliases.end() ? it->second : "import " + name;
}

std::string quoted(const std::vector<std::string>& names) {
  std::vector<std::string> q;
  for (const auto& n : names) q.push_back("`" + n + "`");
  return util::join(q, ", ");
}

}  // namespace

void note_unbound(Plan& p, const std::string& rel, const std::map<size_t, std::vector<python::FreeName>>& names) {
  for (const auto& [i, list] : names) {
    EditStatus& st = p.edits[i];
    if (st.state != EditState::will_apply || list.empty()) continue;
    std::vector<std::string> plain, attributes;
    for (const auto& f : list) {
      st.unbound.push_back(f.name);
      (f.class_attribute ? attributes : plain).push_back(f.name);
    }
    std::string where = " to the edit at " + st.recipe_path + ":" + std::to_string(st.recipe_line);
    std::vector<std::string> parts;
    if (!plain.empty())
      parts.push_back("uses " + quoted(plain) + ", which " + rel +
                      " never binds (no import, definition or assignment) and " +
                      (plain.size() == 1 ? "is not a builtin" : "are not builtins") +
                      ": add `ensure-import: " + import_for(plain.front()) + "` (or the import that binds it)" + where);
    if (!attributes.empty())
      parts.push_back("uses " + quoted(attributes) + " bare, but " + (attributes.size() == 1 ? "it is" : "they are") +
                      " bound in a class body, which a method does not see: write `self." + attributes.front() +
                      "` (or the class's name and a dot) in the edit at " + st.recipe_path + ":" +
                      std::to_string(st.recipe_line));
    st.warning = util::join(parts, "; ");
  }
}

std::vector<std::string> imported_modules(const std::string& statement) {
  std::vector<std::string> out;
  for (auto& raw : util::split(statement, '\n')) {
    std::string line = util::trim(raw.substr(0, raw.find('#')));
    if (util::starts_with(line, "from ")) {
      std::string from = util::trim(line.substr(5, line.find(" import") == std::string::npos ? std::string::npos
                                                                                             : line.find(" import") - 5));
      if (!from.empty() && from[0] != '.') out.push_back(from.substr(0, from.find('.')));
    } else if (util::starts_with(line, "import ")) {
      for (auto& part : util::split(line.substr(7), ',')) {
        std::string name = util::trim(part);
        name = name.substr(0, name.find(' '));
        if (!name.empty()) out.push_back(name.substr(0, name.find('.')));
      }
    }
  }
  return out;
}

void note_unimportable(Plan& p, const std::vector<const recipe::Edit*>& edits, host::Host& host) {
  std::vector<std::string> asked;
  std::map<size_t, std::vector<std::string>> of_edit;
  for (size_t i = 0; i < edits.size() && i < p.edits.size(); ++i) {
    if (p.edits[i].state != EditState::will_apply || edits[i]->ensure_import.empty()) continue;
    for (auto& m : imported_modules(edits[i]->ensure_import)) {
      of_edit[i].push_back(m);
      if (std::find(asked.begin(), asked.end(), m) == asked.end()) asked.push_back(m);
    }
  }
  if (asked.empty()) return;
  auto found = host.importable(asked);
  for (auto& [i, modules] : of_edit) {
    EditStatus& st = p.edits[i];
    for (auto& m : modules) {
      size_t at = size_t(std::find(asked.begin(), asked.end(), m) - asked.begin());
      if (found[at]) continue;
      st.unbound.push_back(m);
      std::string why = "its `ensure-import: " + util::trim(edits[i]->ensure_import) +
                        "` names `" + m + "`, which this environment's Python cannot find (not installed here): " +
                        "the patched module would fail to import; install " + m + " or drop the import at " +
                        st.recipe_path + ":" + std::to_string(st.recipe_line);
      st.warning = st.warning.empty() ? why : st.warning + "; " + why;
    }
  }
}

void refuse_unbound(Plan& p) {
  for (auto& st : p.edits)
    if (st.state == EditState::will_apply && !st.unbound.empty()) {
      st.state = EditState::failed;
      st.message = st.warning + "; or apply --force to write it anyway";
    }
}

}  // namespace sitepatch::engine::detail
