// Writing a zip (a patched wheel) with libzip, byte for byte the same for the same inputs.
#include "sitepatch/util/zip.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "sitepatch/util/error.hpp"
#include "util/zip_open.hpp"

namespace sitepatch::util {

namespace {

using detail::zip_code_text;
using detail::ZipPtr;

// The source, opened for reading as every zip is (detail::open_zip); a failure throws.
ZipPtr open_for_reading(const std::string& path) {
  auto z = detail::open_zip(path);
  if (!z) throw Error(z.error());
  return std::move(*z);
}

// A copy of the compressed bytes of `from` in `src`, when the whole member is taken.
zip_source_t* copied_member(zip_t* dst, zip_t* src, const std::string& from, const std::string& source) {
  zip_int64_t idx = zip_name_locate(src, from.c_str(), ZIP_FL_ENC_RAW);
  if (idx < 0) throw Error(source + ": no member " + from);
#if LIBZIP_VERSION_MAJOR > 1 || LIBZIP_VERSION_MINOR >= 10
  zip_source_t* s = zip_source_zip_file(dst, src, zip_uint64_t(idx), ZIP_FL_COMPRESSED, 0, -1, nullptr);
#else
  zip_source_t* s = zip_source_zip(dst, src, zip_uint64_t(idx), 0, 0, -1);
#endif
  if (!s) throw Error(source + ": cannot copy " + from + " (" + zip_strerror(dst) + ")");
  return s;
}

// 1980-01-01 00:00 in MS-DOS form: the earliest date a zip can hold, the same in every
// time zone (libzip's zip_file_set_mtime goes through localtime).
constexpr zip_uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;
constexpr zip_uint16_t kDosTime = 0;

void add_entry(zip_t* z, zip_t* src, const ZipEntry& e, const std::string& out, const std::string& source) {
  zip_source_t* s = e.data ? zip_source_buffer(z, e.data->data(), e.data->size(), 0)
                           : copied_member(z, src, e.from, source);
  if (!s) throw Error(out + ": cannot add " + e.name + " (" + zip_strerror(z) + ")");
  zip_int64_t idx = zip_file_add(z, e.name.c_str(), s, ZIP_FL_ENC_GUESS);
  if (idx < 0) {
    zip_source_free(s);
    throw Error(out + ": cannot add " + e.name + " (" + zip_strerror(z) + ")");
  }
  auto i = zip_uint64_t(idx);
  if (e.data && zip_set_file_compression(z, i, ZIP_CM_DEFLATE, 9) != 0)
    throw Error(out + ": cannot compress " + e.name + " (" + zip_strerror(z) + ")");
  zip_uint32_t mode = (e.executable ? 0100755u : 0100644u);
  if (zip_file_set_dostime(z, i, kDosTime, kDosDate, 0) != 0 ||
      zip_file_set_external_attributes(z, i, 0, ZIP_OPSYS_UNIX, mode << 16) != 0 ||
      zip_file_extra_field_delete(z, i, ZIP_EXTRA_FIELD_ALL, ZIP_FL_CENTRAL | ZIP_FL_LOCAL) != 0)
    throw Error(out + ": cannot set the attributes of " + e.name + " (" + zip_strerror(z) + ")");
}

}  // namespace

tl::expected<std::vector<ZipMember>, std::string> list_zip(const std::string& path) {
  ZipPtr z(nullptr, zip_discard);
  try {
    z = open_for_reading(path);
  } catch (const Error& e) {
    return tl::unexpected(std::string(e.what()));
  }
  std::vector<ZipMember> out;
  zip_int64_t n = zip_get_num_entries(z.get(), 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t zs;
    if (zip_stat_index(z.get(), zip_uint64_t(i), ZIP_FL_ENC_RAW, &zs) != 0 || !(zs.valid & ZIP_STAT_NAME))
      return tl::unexpected(path + ": cannot read member " + std::to_string(i) + " (" + zip_strerror(z.get()) + ")");
    ZipMember m;
    m.name = zs.name;
    m.size = (zs.valid & ZIP_STAT_SIZE) ? zs.size : 0;
    m.dir = !m.name.empty() && m.name.back() == '/';
    zip_uint8_t os = 0;
    zip_uint32_t attr = 0;
    if (zip_file_get_external_attributes(z.get(), zip_uint64_t(i), 0, &os, &attr) == 0 && os == ZIP_OPSYS_UNIX)
      m.mode = attr >> 16;
    out.push_back(std::move(m));
  }
  return out;
}

void write_zip(const std::string& out, const std::string& source, const std::vector<ZipEntry>& entries) {
  ZipPtr src = open_for_reading(source);
  int err = 0;
  zip_t* raw = zip_open(out.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  if (!raw) throw Error(out + ": cannot write (" + zip_code_text(err) + ")");
  ZipPtr z(raw, zip_discard);
  for (auto& e : entries) add_entry(z.get(), src.get(), e, out, source);
  if (zip_close(z.get()) != 0) throw Error(out + ": cannot write (" + zip_strerror(z.get()) + ")");
  z.release();  // zip_close freed it
}

}  // namespace sitepatch::util
