#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every test with ctest.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
ctest --test-dir "$root/build" --output-on-failure -j "$(nproc)"
