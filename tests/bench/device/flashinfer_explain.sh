#!/bin/bash
# Issue 51 item 8: explain --run on real FlashInfer 0.5.3 ops inside
# torch.compile(fullgraph=True), on the GPU machine (CI never runs it). The bundle it runs
# from is a folder D (git-ignored, carried to the machine) holding:
#   D/bin/sitepatch          a stripped build (cp build/sitepatch D/bin && strip D/bin/sitepatch)
#   D/lib/*.so*              its libraries but glibc's and libstdc++'s (ldd D/bin/sitepatch)
#   D/whl/*.whl              flashinfer-python==0.5.3 (py3-none-any) with apache-tvm-ffi<0.2,
#                            einops, nvidia-ml-py, tabulate for cp312 manylinux_2_28 x86_64
#                            (pip download --no-deps --only-binary=:all: ...)
#   D/models/*.py            the scripts in tests/bench/device/flashinfer/
#   D/run51.sh               this script
# usage there: OPS="rmsnorm fp4_quantize" PER_OP=150 WARM=200 bash D/run51.sh
# Each op: its JIT kernels built eagerly first (in parallel), the script run as it is,
# explain --run, then the recipe applied and the script run again (compiled = eager).
set -u
D=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
LOG=$OUT/run51.log
exec > >(tee -a "$LOG") 2>&1
export LD_LIBRARY_PATH=$D/lib PYTHONUNBUFFERED=1
SP=$D/bin/sitepatch
VENV=$(python3 -c 'import sys; print(sys.prefix)')
echo "== $(date -u +%T) venv $VENV"; nvidia-smi -L
python3 -c 'import torch, sys; print("torch", torch.__version__, "python", sys.version.split()[0], torch.cuda.get_device_name())'
$SP --version || { ldd $SP | grep "not found"; exit 1; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir $D/whl/*.whl || exit 1
python3 -c 'import flashinfer; print("flashinfer", flashinfer.__version__)' || exit 1
cd $D/models
echo "== $(date -u +%T) warm FlashInfer's JIT cache (eager, in parallel)"
for op in ${OPS}; do ( t0=$(date +%s); timeout ${WARM:-300} python3 $op.py --eager > $OUT/warm.$op 2>&1; echo "warm $op rc=$? $(( $(date +%s)-t0 )) s: $(tail -1 $OUT/warm.$op)" ) & pids="${pids:-} $!"; done
# `wait` alone would also wait for the tee of the log (a process substitution), forever.
wait $pids
for op in ${OPS}; do
  echo; echo "== $(date -u +%T) $op: as it is"
  timeout 200 python3 $op.py 2>&1 | grep -E "compiled|eager|Error|error:" | tail -4
  echo "== $(date -u +%T) $op: explain --run"
  t0=$(date +%s)
  timeout ${PER_OP:-240} $SP --venv "$VENV" explain --run "python3 $op.py" --recipe $OUT/$op.yaml ${EXPLAIN_FLAGS:-} > $OUT/explain.$op 2>&1
  echo "explain rc=$? wall $(( $(date +%s)-t0 )) s"; cut -c1-600 $OUT/explain.$op | tail -60; rm -f $OUT/explain.$op
  if [ -s $OUT/$op.yaml ]; then
    echo "-- recipe"; cat $OUT/$op.yaml
    $SP --venv "$VENV" apply $OUT/$op.yaml 2>&1 | tail -3
    echo "-- under the recipe"; timeout 200 python3 $op.py 2>&1 | grep -E "compiled|eager|Error|error:" | tail -4
    $SP --venv "$VENV" rollback --all 2>&1 | tail -2 || true
  fi
done
rm -f $OUT/warm.*
echo "== $(date -u +%T) done"
