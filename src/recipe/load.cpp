// yaml-cpp 0.7's LoadAll loops forever, allocating, on input such as `,`: a token no
// node can start with is left unread, and every HandleNextDocument() after it reports
// another empty document at the same place (jbeder/yaml-cpp#1040, fixed upstream
// after 0.8.0 by #1318/#1319). So no LoadAll: one pass of events over at most two documents
// finds where the second starts, and a document that starts where the one before it
// did (it consumed nothing) is the stray token, reported as a syntax error; then Load()
// builds the nodes of the first document only.
#include "load.hpp"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace sitepatch::recipe::detail {

namespace {

// Records where each document starts; stops the parse (by throwing) at the third
// document, or at a document that starts where the one before it did.
class DocumentStarts : public YAML::EventHandler {
 public:
  struct Stop {};
  explicit DocumentStarts(std::string_view text) : text_(text) {}
  void OnDocumentStart(const YAML::Mark& mark) override {
    // Stuck: the document before consumed nothing, or only an empty node in front of
    // a token that is not a document marker.
    if (!starts.empty() && (starts.back().pos == mark.pos || (null_at_ == mark.pos && !marker(mark)))) {
      stuck = true;
      starts.push_back(mark);
      throw Stop{};
    }
    null_at_ = -1;
    first_ = true;
    starts.push_back(mark);
    if (starts.size() > 2) throw Stop{};
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override {
    if (first_) null_at_ = m.pos;
    node(m);
  }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { node(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override { node(m); }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(m);
  }
  void OnMapEnd() override {}

  std::vector<YAML::Mark> starts;
  std::optional<YAML::Mark> second_root;  // the second document's first node
  bool stuck = false;

 private:
  void node(const YAML::Mark& m) {
    if (starts.size() == 2 && !second_root) second_root = m;
    first_ = false;
  }
  bool marker(const YAML::Mark& m) const {
    std::string_view at = text_.substr(std::min(text_.size(), size_t(std::max(0, m.pos))));
    return at.rfind("---", 0) == 0 || at.rfind("...", 0) == 0 || at.rfind("%", 0) == 0;
  }
  std::string_view text_;
  int null_at_ = -1;   // the document's root is an empty node here
  bool first_ = false;  // no node of this document seen yet
};

// The character at `m`, for the message.
std::string char_at(std::string_view text, const YAML::Mark& m) {
  if (m.pos < 0 || size_t(m.pos) >= text.size()) return "end of input";
  return "`" + std::string(1, text[size_t(m.pos)]) + "`";
}

}  // namespace

Loaded load_first_document(std::string_view text) {
  std::string owned(text);
  Loaded out;
  {
    std::istringstream in(owned);
    YAML::Parser parser(in);
    DocumentStarts starts(text);
    try {
      while (parser.HandleNextDocument(starts)) {
      }
    } catch (const DocumentStarts::Stop&) {
    }
    // A document that consumed nothing left the parser where it began: the token
    // there cannot start a node.
    if (starts.stuck) throw YAML::ParserException(starts.starts.back(), "unexpected " + char_at(text, starts.starts.back()));
    if (starts.starts.size() > 1) out.second = starts.second_root ? *starts.second_root : starts.starts[1];
  }
  out.root = YAML::Load(owned);
  return out;
}

}  // namespace sitepatch::recipe::detail
