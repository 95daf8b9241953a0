#!/usr/bin/env bash
# Clean builds of this tree file by file and in batches (SITEPATCH_UNITY), one
# after the other, each in a fresh build folder with scripts/setup.sh's flags: first the
# demo's target (sitepatch: the library and the CLI), then the rest (the tests); wall and
# CPU seconds of each, and the warnings each build printed.
#   tests/bench/bench_build.sh [WORK_DIR] [JOBS]
# A build folder holds the npm packages it fetched: the first configure of each needs npm.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=${1:-/tmp/sitepatch-bench-build}
jobs=${2:-$(nproc)}
mkdir -p "$work"
printf '%-5s %-10s %8s %8s %9s\n' UNITY target wall_s cpu_s warnings
for unity in OFF ON; do
  b="$work/build-$unity"
  rm -rf "$b"
  cmake -S "$root" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DSITEPATCH_TESTS=ON -DSITEPATCH_UNITY=$unity >/dev/null
  for target in sitepatch all; do
    /usr/bin/time -o "$work/time" -f "%e %U %S" cmake --build "$b" -j "$jobs" --target $target >"$b.$target.log" 2>&1
    read -r wall user sys <"$work/time"
    warnings=$(grep -c "warning:" "$b.$target.log" || true)
    printf '%-5s %-10s %8.1f %8.1f %9s\n' $unity $target "$wall" "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" "$warnings"
  done
done
