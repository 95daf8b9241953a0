#!/usr/bin/env bash
# Runs one libFuzzer target (built with -DSITEPATCH_FUZZ=ON in build-fuzz) for SECONDS,
# at low priority, with the committed corpus as seeds and new inputs kept in
# build-fuzz/corpus-TARGET. A timeout whose input then runs well under the limit on its
# own was the machine being busy (the limit is wall time): it is set aside in
# build-fuzz/spurious-TARGET and the run goes on. Any other finding stops the run.
# usage: scripts/fuzz.sh recipe|edit [SECONDS]
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
target=$1
seconds=${2:-3600}
b="$root/build-fuzz"
bin="$b/tests/fuzz/sitepatch_fuzz_$target"
mkdir -p "$b/corpus-$target" "$b/artifacts-$target" "$b/spurious-$target"
end=$(($(date +%s) + seconds))
while (($(date +%s) < end)); do
  left=$((end - $(date +%s)))
  nice -n 19 "$bin" "$b/corpus-$target" "$root/tests/fuzz/corpus/$target" \
    -dict="$root/tests/fuzz/recipe.dict" -timeout=2 -rss_limit_mb=1024 -max_len=8192 \
    -max_total_time="$left" -artifact_prefix="$b/artifacts-$target/" -print_final_stats=1
  found=$(ls "$b/artifacts-$target" 2>/dev/null)
  [ -z "$found" ] && continue
  for f in $found; do
    if [[ $f == timeout-* ]]; then
      t0=$(date +%s%N)
      "$bin" "$b/artifacts-$target/$f" >/dev/null 2>&1
      ms=$((($(date +%s%N) - t0) / 1000000))
      if ((ms < 1000)); then
        echo "fuzz.sh: $f runs in ${ms} ms alone: a busy machine, not a hang; going on"
        mv "$b/artifacts-$target/$f" "$b/spurious-$target/"
        continue
      fi
    fi
    echo "fuzz.sh: finding $b/artifacts-$target/$f"
    exit 1
  done
done
