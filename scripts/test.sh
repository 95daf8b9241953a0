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
ctest --test-dir "$root/build" --output-on-failure -j "$(nproc)" "${quick[@]}"
