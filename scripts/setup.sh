#!/usr/bin/env bash
# Installs what the build needs (Debian 12 packages; npm for tree-sitter and the Python
# grammar) and builds sitepatch into build/. Safe to run again: it installs only what is
# missing. With target names (`setup.sh sitepatch`, as the demo runs it) only those are
# built, not the tests.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

packages=(build-essential cmake ninja-build pkg-config git patch ca-certificates
  python3 python3-venv python3-pip openssh-server openssh-client iproute2 util-linux procps
  libgit2-dev libcli11-dev libspdlog-dev libyaml-cpp-dev libzip-dev
  catch2 nlohmann-json3-dev libssl-dev libexpected-dev
  python3-click python3-certifi  # real third-party modules some unit tests read
  python3-jsonschema python3-yaml  # the tests that check --json output and recipes against docs/schema/
  ansible-core ansible-lint       # the fleet collection's tests (ansible/)
  dpkg-dev man-db zsh fish        # the install tests: cpack's dpkg-shlibdeps, man -w, the completions
  acl                             # setfacl: the root-safety tests grant another user write by an ACL
  python3-dev)                    # Python.h: a test builds a compiled twin of a module with the C compiler
# The tests read real third-party code: Debian's torch (1.13) for the audit. Not for a
# build of named targets (the demo's), which needs none of it.
(($#)) || packages+=(python3-torch)
# npm fetches the pinned tree-sitter library and Python grammar; keep a Node.js that is already there.
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# RelWithDebInfo, not the plain build's Release: the tests' crashes get backtraces.
# -g1 (functions and line tables) is enough for those and builds a third faster than -g
# (14.7 s -> 10.1 s for cmd_audit.cpp here): the demo from a fresh clone builds every file.
# -O1, not -O2, for the tests' build: the binary compiles in 204 s of CPU instead of 288
# (2026-12-07), and an audit walk of Debian's torch or the call-graph corpus runs no slower
# (0.40 s and 6.3 s either way). SITEPATCH_OPT=-O2 builds as a release does (bench.sh).
# The CLI's own files (src/cli: arguments and printing) at -O0 unless SITEPATCH_OPT is
# given: 64 -> 48 s of CPU, and the commands' time is the library's.
# Tests are off in a plain build (no Catch2 needed); this build runs them.
opt=${SITEPATCH_OPT:--O1}
cli_opt=${SITEPATCH_OPT:--O0}
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$opt -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DSITEPATCH_CLI_OPT="$cli_opt" -DSITEPATCH_TESTS=ON >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$root/build" -j "$(nproc)" "${targets[@]}"
