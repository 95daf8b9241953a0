# sitepatch agent: run by the environment's own Python (3.8+, standard library only).
# It answers requests on stdin, one JSON object per line, with one JSON line each on
# stdout. Bytes travel base64-encoded. Every request gets a reply; EOF ends the agent.
# It is carried inside the sitepatch binary; src/host/agent_client.cpp speaks to it.
#
# agent/start.py, the first of its parts: src/host/agent/*.py, one concept each, are joined
# byte for byte, in the order AGENT_PARTS lists them in CMakeLists.txt, into the one text
# the binary carries (generated/sitepatch_agent.py in the build folder: a traceback's line
# numbers are that file's). This part: the version check, the imports, the protocol's
# number, and the errors a request ends with.
import sys

# Before anything newer is used: an old Python gets a clear refusal. Every part keeps to
# syntax older Pythons still parse (no f-strings, no :=), so the check is reached.
if sys.version_info < (3, 8):
    sys.stderr.write("Python %d.%d.%d (%s) is too old for the sitepatch agent: it needs 3.8 or newer\n"
                     % (sys.version_info[0], sys.version_info[1], sys.version_info[2], sys.executable))
    sys.exit(96)

# `-c` puts the current folder first on sys.path: a json.py there must not replace ours.
sys.path[:] = [p for p in sys.path if p not in ("", ".")]

import binascii, builtins, errno, os, site, stat, sysconfig, time

# Every remote command waits for this start, so it imports only what is already loaded
# or cheap: `json`, `base64`, `fnmatch` and `hashlib` are not used, because `re` (with
# `enum`) and OpenSSL took about 20 ms of it. JSON goes through the C accelerator `json`
# itself uses, base64 through binascii, sha256 through the builtin module; each falls
# back to the full module where the fast one is missing.

try:
    import fcntl
except ImportError:  # not POSIX: lock is unavailable
    fcntl = None

PROTOCOL = 5


def oserr(e, path):
    return "%s: %s" % (path, e.strerror or e)


class Refused(Exception):
    pass


class Partial(Exception):
    def __init__(self, message, changed):
        Exception.__init__(self, message)
        self.changed = changed
