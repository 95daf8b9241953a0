#include "sitepatch/util/zip.hpp"

#include "sitepatch/util/file.hpp"
#include "util/zip_open.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace sitepatch::util {

namespace detail {

std::string zip_code_text(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  std::string out = zip_error_strerror(&e);
  zip_error_fini(&e);
  return out;
}

tl::expected<ZipPtr, std::string> open_zip(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return tl::unexpected(path + ": " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return tl::unexpected(path + ": not a regular file");
  }
  int err = 0;
  zip_t* raw = zip_fdopen(fd, ZIP_RDONLY, &err);  // owns fd from here on success
  if (!raw) {
    ::close(fd);
    return tl::unexpected(path + ": not a zip file (" + zip_code_text(err) + ")");
  }
  return ZipPtr(raw, zip_discard);
}

}  // namespace detail

tl::expected<std::map<std::string, std::string>, std::string> read_zip(
    const std::string& path, const std::function<bool(const std::string&)>& want, size_t max_total) {
  auto opened = detail::open_zip(path);
  if (!opened) return tl::unexpected(opened.error());
  detail::ZipPtr z = std::move(*opened);
  std::map<std::string, std::string> out;
  size_t total = 0;
  zip_int64_t n = zip_get_num_entries(z.get(), 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* name = zip_get_name(z.get(), zip_uint64_t(i), ZIP_FL_ENC_RAW);
    if (!name || !want(name)) continue;
    zip_stat_t zs;
    if (zip_stat_index(z.get(), zip_uint64_t(i), 0, &zs) != 0)
      return tl::unexpected(path + ": cannot read " + name + " (" + zip_strerror(z.get()) + ")");
    // A member is held in memory: no more than any file sitepatch reads (a zip bomb
    // says small and inflates large, so what is read is counted too).
    if ((zs.valid & ZIP_STAT_SIZE) && zs.size > kMaxFileBytes)
      return tl::unexpected(path + ": " + name + " is " + too_large(zs.size));
    std::unique_ptr<zip_file_t, decltype(&zip_fclose)> f(zip_fopen_index(z.get(), zip_uint64_t(i), 0), zip_fclose);
    if (!f) return tl::unexpected(path + ": cannot read " + name + " (" + zip_strerror(z.get()) + ")");
    std::string data;
    char buf[65536];
    for (zip_int64_t got; (got = zip_fread(f.get(), buf, sizeof buf)) != 0;) {
      if (got < 0) return tl::unexpected(path + ": cannot read " + name + " (" + zip_file_strerror(f.get()) + ")");
      data.append(buf, size_t(got));
      if (data.size() > kMaxFileBytes) return tl::unexpected(path + ": " + name + " is " + too_large(data.size()));
      if ((total += size_t(got)) > max_total)
        return tl::unexpected(path + ": its members inflate to more than " + std::to_string(max_total >> 20) +
                              " MB in all; refusing to read them");
    }
    out[name] = std::move(data);
  }
  return out;
}

}  // namespace sitepatch::util
