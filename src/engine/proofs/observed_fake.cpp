// explain --run's fakes from what the real function did (observe_hook.py's lines): each
// output's dtype and device as seen, and its shape as expressions of the inputs' shapes
// that fit every observation (the repro's inputs, and the same with a dimension
// doubled); a dimension no expression fits in every observation is written as the
// number seen (static shapes), and the fake's comment says so. Pure.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "engine/proofs/run_impl.hpp"
#include "sitepatch/util/strings.hpp"

namespace sitepatch::engine {

namespace {

constexpr const char* kObserveMark = "sitepatch-observe: ";

ObservedValue value_of(const nlohmann::json& j) {
  ObservedValue v;
  if (!j.is_object()) return v;
  if (j.contains("dtype") && j["dtype"].is_string() && j.contains("shape") && j["shape"].is_array()) {
    v.tensor = true;
    v.dtype = j["dtype"].get<std::string>();
    v.device = j.value("device", "");
    for (auto& d : j["shape"])
      if (d.is_number_integer()) v.shape.push_back(d.get<long>());
  }
  return v;
}

ObservedCall call_of(const nlohmann::json& j) {
  ObservedCall c;
  if (!j.is_object()) return c;
  if (j.contains("inputs") && j["inputs"].is_object())
    for (auto& [name, v] : j["inputs"].items()) c.inputs.emplace_back(name, value_of(v));
  if (j.contains("outputs") && j["outputs"].is_array())
    for (auto& v : j["outputs"]) c.outputs.push_back(value_of(v));
  c.tuple = j.value("tuple", false);
  for (const char* key : {"mutated", "aliased"})
    if (j.contains(key) && j[key].is_array())
      for (auto& m : j[key])
        if (m.is_string()) (std::string(key) == "mutated" ? c.mutated : c.aliased).push_back(m.get<std::string>());
  if (j.contains("resized") && j["resized"].is_array())
    for (auto& r : j["resized"]) c.resized.push_back(call_of(r));
  return c;
}

bool safe_dtype(const std::string& d) {
  return !d.empty() && std::all_of(d.begin(), d.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// The expression for dimension `dim` of output `out` that fits every observation.
std::string dimension(const std::vector<const ObservedCall*>& seen, size_t out, size_t dim,
                      const std::vector<std::string>& tensors, bool& fixed) {
  auto fits = [&](auto&& value_of_call) {
    return std::all_of(seen.begin(), seen.end(), [&](const ObservedCall* c) {
      auto want = value_of_call(*c);
      return want.has_value() && *want == c->outputs[out].shape[dim];
    });
  };
  auto input_dim = [&](const ObservedCall& c, const std::string& name, size_t d) -> std::optional<long> {
    for (auto& [n, v] : c.inputs)
      if (n == name && v.tensor && d < v.shape.size()) return v.shape[d];
    return std::nullopt;
  };
  if (seen.size() > 1)
    for (const std::string& name : tensors) {
      const ObservedValue* first = nullptr;
      for (auto& [n, v] : seen.front()->inputs)
        if (n == name && v.tensor) first = &v;
      if (!first) continue;
      for (size_t d = 0; d < first->shape.size(); ++d) {
        std::string base = name + ".shape[" + std::to_string(d) + "]";
        if (fits([&](const ObservedCall& c) { return input_dim(c, name, d); })) return base;
        for (long k : {2L, 4L, 8L}) {
          if (fits([&](const ObservedCall& c) -> std::optional<long> {
                auto v = input_dim(c, name, d);
                return v && *v % k == 0 ? std::optional<long>(*v / k) : std::nullopt;
              }))
            return base + " // " + std::to_string(k);
          if (fits([&](const ObservedCall& c) -> std::optional<long> {
                auto v = input_dim(c, name, d);
                return v ? std::optional<long>(*v * k) : std::nullopt;
              }))
            return base + " * " + std::to_string(k);
        }
      }
    }
  long first = seen.front()->outputs[out].shape[dim];
  bool same = std::all_of(seen.begin(), seen.end(), [&](const ObservedCall* c) { return c->outputs[out].shape[dim] == first; });
  if (!same || seen.size() == 1) fixed = true;
  return std::to_string(first);
}

}  // namespace

std::vector<Observation> read_observations(const std::string& text) {
  std::vector<Observation> out;
  const std::string mark = kObserveMark;
  for (size_t at = text.find(mark); at != std::string::npos; at = text.find(mark, at + 1)) {
    if (at > 0 && text[at - 1] != '\n') continue;
    size_t end = text.find('\n', at);
    auto j = nlohmann::json::parse(text.substr(at + mark.size(), end == std::string::npos ? end : end - at - mark.size()),
                                   nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("function") || !j["function"].is_string()) continue;
    Observation o;
    o.function = j["function"].get<std::string>();
    if (j.contains("calls") && j["calls"].is_array())
      for (auto& c : j["calls"]) o.calls.push_back(call_of(c));
    if (!o.calls.empty()) out.push_back(std::move(o));
  }
  return out;
}

std::string observed_fake(const Observation& o, const std::vector<std::string>& tensors, std::string& why) {
  const ObservedCall& c = o.calls.front();
  if (!c.mutated.empty()) {
    why = "it changes its input `" + util::printable(c.mutated.front()) +
          "` (seen in the run): a custom op that does needs mutates_args, which this does not write";
    return "";
  }
  if (!c.aliased.empty()) {
    why = "its output " + util::printable(c.aliased.front()) +
          " shares the input's storage (seen in the run): a custom op must return new tensors";
    return "";
  }
  if (c.outputs.empty() || std::any_of(c.outputs.begin(), c.outputs.end(), [](const ObservedValue& v) {
        return !v.tensor || !safe_dtype(v.dtype);
      })) {
    why = "it returned something other than tensors in the run";
    return "";
  }
  std::string ref;
  for (const std::string& name : tensors)
    for (auto& [n, v] : c.inputs)
      if (ref.empty() && n == name && v.tensor) ref = name;
  if (ref.empty()) {
    why = "no tensor among its inputs in the run to make outputs like";
    return "";
  }
  std::string ref_device;
  for (auto& [n, v] : c.inputs)
    if (n == ref) ref_device = v.device;
  // Every observation of the same structure: the repro's call and the resized ones.
  std::vector<const ObservedCall*> seen = {&c};
  for (const ObservedCall& r : c.resized) {
    bool alike = r.outputs.size() == c.outputs.size();
    for (size_t i = 0; alike && i < r.outputs.size(); ++i)
      alike = r.outputs[i].tensor && r.outputs[i].shape.size() == c.outputs[i].shape.size();
    if (alike) seen.push_back(&r);
  }
  bool fixed = false;
  std::vector<std::string> made;
  for (size_t i = 0; i < c.outputs.size(); ++i) {
    const ObservedValue& v = c.outputs[i];
    std::vector<std::string> dims;
    for (size_t d = 0; d < v.shape.size(); ++d) dims.push_back(dimension(seen, i, d, tensors, fixed));
    std::string shape = "(" + util::join(dims, ", ") + (dims.size() == 1 ? ",)" : ")");
    if (v.device == ref_device)
      made.push_back(ref + ".new_empty(" + shape + ", dtype=torch." + v.dtype + ")");
    else
      made.push_back("torch.empty(" + shape + ", dtype=torch." + v.dtype + ", device=\"" + util::printable(v.device) +
                     "\")");
  }
  why = fixed ? "static shapes: a dimension fits no expression of the inputs' shapes in every run seen" : "";
  return "return " + util::join(made, ", ") + "\n";
}

}  // namespace sitepatch::engine
