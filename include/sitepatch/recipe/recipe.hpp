#pragma once
// Recipe format v1: YAML text -> validated Recipe. Parsing does no I/O: the caller
// hands in the bytes and the path to name in messages.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sitepatch/recipe/version.hpp"
#include "sitepatch/util/error.hpp"

namespace sitepatch::recipe {

/// 1-based line and column in the recipe file.
struct Mark {
  int line = 0;
  int column = 0;
};

enum class TargetKind { function, class_, variable };

enum class Action {
  none,              // ensure-import alone
  replace_body,      // body replaced, docstring kept
  prepend_body,      // code inserted at the top of the body, after the docstring
  add_decorator,     // outermost unless `position: innermost`
  remove_decorator,  // decorator removed (matched by its text)
  replace_function,  // whole definition, decorators included
  replace,           // `old` -> `new` inside the target only, exactly `count` times
  set_value,         // right-hand side of a module-level assignment
  insert_after,      // new definitions (or assignments) placed right after the target's; with
                     // `anchor`, new statements right after one statement of a function's body
  insert_before,     // new statements right before one statement (`anchor`) of a function's body
  replace_module,    // the whole module's text (capture --whole-file); no target
  register_custom_op,  // a module-level function made a torch custom op (one node to dynamo); `code`
                       // is its fake implementation's body
};

/// The YAML key of an action ("replace-body"), or "ensure-import" for none.
std::string_view action_name(Action a);
std::string_view kind_name(TargetKind k);

/// How lines 2+ of a replace's `old` and `new` stand in the file (`replace-indent:`):
/// relative to the indentation where the match begins (text written at column 0 fits a
/// method body), or at the column they are written at (how every recipe was read before
/// history record format 3, and so how a history's older records are read).
enum class ReplaceIndent { relative, absolute };

struct Edit {
  Mark mark;                     // the edit's `-` in the recipe
  std::string module;            // dotted module name, or empty when `file` is set
  std::string file;              // path relative to site-packages, or empty
  TargetKind kind = TargetKind::function;
  std::string target;            // qualified: f, Class.method, outer.inner; empty for ensure-import alone
  Action action = Action::none;
  std::string code;              // body / function / value text as YAML gives it, or the
                                 // decorator expression (trimmed, a leading `@` dropped)
  std::string old_text;          // replace
  std::string new_text;          // replace
  int count = 1;                 // replace
  ReplaceIndent indent = ReplaceIndent::relative;  // replace: the recipe's `replace-indent`
  bool innermost = false;        // add-decorator `position: innermost`
  int occurrence = 0;            // 1-based pick among duplicate definitions; 0 = must be unique
  std::string anchor;            // insert-before/-after: one statement of the function's body,
                                 // matched line by line with each line's spaces trimmed
  std::string op_name;           // register-custom-op `op-name` ("pkg::fn"); "" = the package and function
  std::string op_schema;         // register-custom-op `op-schema` ("(Tensor x) -> Tensor"); "" = from the def
  std::string ensure_import;     // an import statement: "import torch", "from a.b import C"
  Mark code_mark;                // where `code` (or replace's `new`) starts in the recipe
  bool code_lines = false;       // `code` is a `|` block: its lines are the recipe's lines

  /// The recipe position of 1-based `line`:`column` of `code` (or `new`): exact for a `|`
  /// block and for the first line of a plain or quoted value, else the value's start.
  Mark code_position(int line, int column) const;

  /// "module:target" or "file:target" as users read it in messages.
  std::string where() const;
};

struct Requirement {
  std::string name;       // distribution name as written
  std::string specifier;  // ">=0.4,<0.7" as written (may be empty)
  std::vector<Clause> clauses;
};

/// What `apply` does when the installed version changed since the recipe was applied.
enum class OnUpgrade { reapply, warn, fail };
std::string_view on_upgrade_name(OnUpgrade o);

struct Recipe {
  std::string path;         // as given on the command line (messages name it so)
  std::string origin;       // the file's absolute path, which the history records so that
                            // `status` finds it from any folder ("" when not a file)
  std::string text;         // the file's bytes
  std::string hash;         // sha256 hex of `text`
  std::string id;
  std::string description;
  std::vector<Requirement> requires;  // every one must hold (a scalar or a list in YAML)
  OnUpgrade on_upgrade = OnUpgrade::reapply;
  ReplaceIndent replace_indent = ReplaceIndent::relative;  // copied into every edit
  bool replace_indent_given = false;                       // the recipe says it (a history's
                                                           // default does not override it)
  std::vector<Edit> edits;
};

/// `r` read with `indent` (the recipe's and each edit's), as a history reads the recipe
/// text of a record made before format 3.
void set_replace_indent(Recipe& r, ReplaceIndent indent);

struct Diagnostic {
  std::string file;
  Mark mark;
  std::string message;
  /// "file:line:col: message"
  std::string str() const;
};

/// Every problem found in a recipe (not just the first); exit code 2.
class RecipeError : public Error {
 public:
  explicit RecipeError(std::vector<Diagnostic> diagnostics);
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

/// "name[extras] specifier" (`requires:`): extras are dropped, clauses checked;
/// nullopt with `error` set when malformed.
std::optional<Requirement> parse_requirement(std::string_view s, std::string* error);

/// A recipe id: [a-z0-9][a-z0-9._-]*.
bool valid_id(std::string_view s);

/// `s` as a one-line YAML scalar that reads back as `s`: plain where YAML allows, else
/// double-quoted.
std::string yaml_scalar(std::string_view s);

/// `e` as a recipe's list item (two spaces in): its code a `|` block where YAML gives the
/// bytes back exactly, else double-quoted; `parse` reads the same edit back.
std::string edit_yaml(const Edit& e);

/// `s` as the text of one `#` comment line: control characters (\n and \r included),
/// bytes that are not UTF-8 and Unicode's line and paragraph separators escaped (\xNN,
/// \u2028), so nothing after the `#` can start a line of YAML.
std::string yaml_comment(std::string_view s);

/// Parses `text`, a recipe sitepatch wrote (`what` names it in messages), and checks it
/// holds exactly `edits` under `id`: no more, no fewer, each reading back as written.
/// Throws sitepatch::Error naming the difference otherwise, before anything is written.
void check_written(std::string_view text, const std::string& id, const std::vector<Edit>& edits,
                   const std::string& what);

/// Validates `text` against the v1 schema. Throws RecipeError listing every problem.
Recipe parse(std::string_view text, const std::string& path);

}  // namespace sitepatch::recipe
