#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test with ctest.
#   scripts/test.sh          everything (what CI runs)
#   scripts/test.sh --quick  the build, then the tests with no venv, sshd or torch in them
#                            (ctest label `quick`: about 300 unit tests and the docs and
#                            layout checks, well under a minute): the edit-compile loop
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
quick=()
case "${1:-}" in
  "") ;;
  --quick) quick=(-L quick) ;;
  -h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "test.sh: unknown option $1 (--quick, or nothing for the whole suite)" >&2; exit 2 ;;
esac
"$root/scripts/setup.sh"
# One test more than the cores: the end-to-end tests wait on the processes they start
# (python, pip, ssh) about a quarter of the time; on 2 cores -j3 took the suite from
# 564 s to 476 s (2026-12-07).
run=(ctest --test-dir "$root/build" --output-on-failure -j "$(($(nproc) + 1))" "${quick[@]}")
# The tests' temp folders (TMPDIR) on a tmpfs of their own, mounted in a mount namespace
# only this run sees (gone with it), when root can make one and the caller chose no
# TMPDIR: the suite makes and deletes some 10^5 files, and ext4's fsyncs and its inode
# allocator's search past recently deleted inodes cost the kill and property loops 23% of
# their system time (4% of their wall time beside each other; one loop alone on an ext4
# /tmp that a whole suite had churned: 19.0 -> 13.4 s, 2026-12-07).
if [ -z "${TMPDIR:-}" ] && [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
  tmp=$(mktemp -d /tmp/sitepatch-tests.XXXXXX)
  trap 'rmdir "$tmp" 2>/dev/null || true' EXIT
  unshare -m sh -c 'if mount -t tmpfs -o mode=1777 sitepatch-tests "$0"; then export TMPDIR="$0"
    else echo "test.sh: no tmpfs could be mounted; the tests use /tmp" >&2; fi; exec "$@"' "$tmp" "${run[@]}"
else
  "${run[@]}"
fi
