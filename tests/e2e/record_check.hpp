#pragma once
// What importlib.metadata users and security scanners do: every RECORD row with a hash
// against the file's bytes. Prints the rows that disagree, then "checked N".
namespace e2e {

inline constexpr const char* kCheckRecord =
    "import base64, hashlib, importlib.metadata as m\n"
    "bad, n = [], 0\n"
    "for f in m.distribution('flashinfer-python').files:\n"
    "    if not f.hash: continue\n"
    "    data = f.locate().read_bytes(); n += 1\n"
    "    digest = base64.urlsafe_b64encode(hashlib.new(f.hash.mode, data).digest()).rstrip(b'=').decode()\n"
    "    if digest != f.hash.value or f.size != len(data): bad.append(str(f))\n"
    "print(' '.join(bad), 'checked', n)\n";

}  // namespace e2e
