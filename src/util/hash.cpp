#include "sitepatch/util/hash.hpp"

#include <openssl/evp.h>

#include <stdexcept>

#include "sitepatch/util/strings.hpp"

namespace sitepatch::util {
namespace {

std::string sha256_raw(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  // Fetched once: OpenSSL 3 otherwise looks the algorithm up in its provider on every call.
  static EVP_MD* const sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  if (!sha256 || EVP_Digest(data.data(), data.size(), md, &len, sha256, nullptr) != 1)
    throw std::runtime_error("sha256 failed");
  return std::string(reinterpret_cast<char*>(md), len);
}

}  // namespace

std::string sha256_hex(std::string_view data) {
  static const char* digits = "0123456789abcdef";
  std::string raw = sha256_raw(data), out;
  out.reserve(raw.size() * 2);
  for (unsigned char c : raw) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string sha256_record(std::string_view data) {
  std::string b = base64_encode(sha256_raw(data));
  for (char& c : b) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  while (!b.empty() && b.back() == '=') b.pop_back();
  return b;
}

}  // namespace sitepatch::util
