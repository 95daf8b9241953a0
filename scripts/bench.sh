#!/usr/bin/env bash
# Builds and runs the benchmarks in tests/bench. The remote one compares against
# Debian's ansible-core; the audit one against ast-grep (npm @ast-grep/cli, installed
# under build/_deps/ast-grep, not globally) on Debian's dist-packages with sympy,
# scipy, numpy and torch installed. What is missing is installed here.
# usage: scripts/bench.sh [ENGINE_ROUNDS] [REMOTE_ROUNDS] [AUDIT_ROUNDS]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The benchmarks measure the optimization a release is built with (the tests' build is -O1).
SITEPATCH_OPT=-O2 "$root/scripts/setup.sh"
cmake --build "$root/build" -j "$(nproc)" --target sitepatch_benches
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
missing=()
for p in ansible-core python3-sympy python3-scipy python3-numpy python3-torch time; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
astgrep_prefix="$root/build/_deps/ast-grep"
if [ ! -x "$astgrep_prefix/node_modules/.bin/ast-grep" ]; then
  npm install --prefix "$astgrep_prefix" @ast-grep/cli@0.51.1
fi
"$root/build/tests/bench/sitepatch_bench_plan_scale"
"$root/build/tests/bench/sitepatch_bench" "${1:-9}"
"$root/build/tests/bench/sitepatch_bench_remote" "${2:-5}"
"$root/build/tests/bench/sitepatch_bench_fleet" 3 8 32
"$root/build/tests/bench/sitepatch_bench_fixed_cost" "${1:-9}"
AST_GREP="$astgrep_prefix/node_modules/.bin/ast-grep" "$root/tests/bench/bench_audit.sh" \
  /usr/lib/python3/dist-packages "${3:-5}"
AST_GREP="$astgrep_prefix/node_modules/.bin/ast-grep" "$root/tests/bench/bench_audit_shipped.sh" \
  /usr/lib/python3/dist-packages "${3:-5}"
