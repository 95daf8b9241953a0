#include "sitepatch/util/hash.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "sitepatch/util/error.hpp"

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

std::string hex_of(const std::string& raw) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(raw.size() * 2);
  for (unsigned char c : raw) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

}  // namespace

std::string sha256_hex(std::string_view data) { return hex_of(sha256_raw(data)); }

std::string sha256_file_hex(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": " + std::strerror(errno));
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  bool ok = ctx && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) == 1;
  char buf[1 << 16];
  for (ssize_t got; ok && (got = ::read(fd, buf, sizeof buf)) != 0;) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      int err = errno;
      ::close(fd);
      throw Error(path + ": " + std::strerror(err));
    }
    ok = EVP_DigestUpdate(ctx.get(), buf, size_t(got)) == 1;
  }
  ::close(fd);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!ok || EVP_DigestFinal_ex(ctx.get(), md, &len) != 1) throw Error(path + ": sha256 failed");
  return hex_of(std::string(reinterpret_cast<char*>(md), len));
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
