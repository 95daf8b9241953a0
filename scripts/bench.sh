#!/usr/bin/env bash
# Builds and runs the benchmarks in tests/bench. The remote one compares against
# Debian's ansible-core, installed here when missing.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
if ! command -v ansible-playbook >/dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends ansible-core
fi
"$root/build/tests/bench/sitepatch_bench" "${1:-9}"
"$root/build/tests/bench/sitepatch_bench_remote" "${2:-5}"
