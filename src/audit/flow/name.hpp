#pragma once
// A name an instruction carries (an attribute, a literal, a module), interned: one pointer
// instead of a std::string. The lowered code of every module a walk reads is kept for the
// whole walk (torch's import reads 220 modules, 400 thousand instructions), and two
// std::strings made an instruction 96 bytes of which 64 were names, nearly all repeated.
#include <string>
#include <string_view>

namespace sitepatch::audit::flow {

class Name {
 public:
  Name() : s_(&none()) {}
  Name(const std::string& s) : s_(&intern(s)) {}  // NOLINT: a drop-in for std::string
  Name(const char* s) : s_(&intern(s)) {}         // NOLINT
  Name& operator=(const std::string& s) { return *this = Name(s); }
  Name& operator=(const char* s) { return *this = Name(s); }

  operator const std::string&() const { return *s_; }  // NOLINT
  const std::string& str() const { return *s_; }
  bool empty() const { return s_->empty(); }
  size_t size() const { return s_->size(); }
  const char* c_str() const { return s_->c_str(); }
  char operator[](size_t k) const { return (*s_)[k]; }
  size_t find(std::string_view x, size_t from = 0) const { return s_->find(x, from); }
  size_t find(char c, size_t from = 0) const { return s_->find(c, from); }
  size_t rfind(std::string_view x, size_t from = std::string::npos) const { return s_->rfind(x, from); }
  size_t rfind(char c, size_t from = std::string::npos) const { return s_->rfind(c, from); }
  std::string substr(size_t from, size_t n = std::string::npos) const { return s_->substr(from, n); }

  friend bool operator==(const Name& a, const Name& b) { return a.s_ == b.s_; }  // interned
  friend bool operator!=(const Name& a, const Name& b) { return a.s_ != b.s_; }
  friend bool operator==(const Name& a, const std::string& b) { return *a.s_ == b; }
  friend bool operator!=(const Name& a, const std::string& b) { return *a.s_ != b; }
  friend bool operator==(const std::string& a, const Name& b) { return a == *b.s_; }
  friend bool operator!=(const std::string& a, const Name& b) { return a != *b.s_; }
  friend bool operator==(const Name& a, const char* b) { return *a.s_ == b; }
  friend bool operator!=(const Name& a, const char* b) { return *a.s_ != b; }
  friend bool operator<(const Name& a, const Name& b) { return *a.s_ < *b.s_; }
  friend std::string operator+(const std::string& a, const Name& b) { return a + *b.s_; }
  friend std::string operator+(const char* a, const Name& b) { return a + *b.s_; }
  friend std::string operator+(const Name& a, const std::string& b) { return *a.s_ + b; }
  friend std::string operator+(const Name& a, const char* b) { return *a.s_ + b; }

 private:
  static const std::string& none();
  static const std::string& intern(std::string_view s);
  const std::string* s_;
};

}  // namespace sitepatch::audit::flow
