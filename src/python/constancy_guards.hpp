#pragma once
// What dynamo guards while tracing, and so holds as a constant: a tensor's metadata,
// comparisons and conditionals of it, names bound to it in a function. Private to
// python/constancy.cpp, which asks it of a call's arguments. Pure.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "python/tree.hpp"

namespace sitepatch::python::guards {

/// Whether a value of the module (a literal, a module-level constant) is fixed: the caller's rule.
using IsConstant = std::function<bool(TSNode)>;

/// Whether `n`, in function `fn` (null at module level), is what dynamo guards and holds
/// as a constant: a tensor's device, device.type, dtype, is_cuda, ndim, dim(), shape[i],
/// size(i), names unpacked from a shape, comparisons and conditionals of those (with
/// constants), and a local assigned one once. `keys` gets what it rests on, one key per
/// kind of metadata ("device.type", "shape[i]", "size()", "shape unpacked"), the names
/// engine/audit/calibrate_guards.cpp probes the environment's dynamo for.
bool guarded(std::string_view src, TSNode n, TSNode fn, const IsConstant& constant,
             std::vector<std::string>* keys = nullptr);

/// The names `fn`'s body binds: assignment targets, for and with targets, walrus.
std::vector<std::string> locals_of(std::string_view src, TSNode fn);

}  // namespace sitepatch::python::guards
