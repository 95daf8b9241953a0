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
ctest --test-dir "$root/build" --output-on-failure -j "$(($(nproc) + 1))" "${quick[@]}"
