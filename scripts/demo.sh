#!/usr/bin/env bash
# Sets up and builds sitepatch, then shows the whole workflow on a throwaway venv
# with a small stand-in for FlashInfer (and for torch and packaging, which would come
# from PyPI): plan, apply, list, verify, show, log; then `pip install -U` to 0.6.0
# (which rewrites the patched files and moves fp4_quantize), status, apply again,
# rollback.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh" sitepatch  # the binary alone: the tests are test.sh's to build

sp="$root/build/sitepatch"
python=${SITEPATCH_TEST_PYTHON:-python3}
demo=$(mktemp -d /tmp/sitepatch-demo.XXXXXX)
trap 'rm -rf "$demo"' EXIT
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

step "a throwaway venv with the demo packages, installed by pip from local wheels"
"$python" -m venv --without-pip "$demo/venv"
for pkg in torch-2.9.0 packaging-24.0 flashinfer-python-0.5.3 flashinfer-python-0.6.0; do
  "$python" "$root/scripts/build_wheel.py" "$root/tests/data/packages/$pkg" \
    "${pkg%-*}" "${pkg##*-}" "$demo/wheels" >/dev/null
done
"$python" -m pip --python "$demo/venv/bin/python" install --quiet --no-index --no-deps \
  --disable-pip-version-check "$demo"/wheels/torch-*.whl "$demo"/wheels/packaging-*.whl \
  "$demo"/wheels/flashinfer_python-0.5.3-*.whl
export VIRTUAL_ENV="$demo/venv"
probe='import os; os.environ["CUDA_HOME"] = "/nonexistent"
import flashinfer
from flashinfer.jit.cpp_ext import get_cuda_version
print("fp4_quantize excluded from dynamo:", getattr(flashinfer.fp4_quantize, "_torchdynamo_disable", False))
print("CUDA version:", get_cuda_version())'

step "before: get_cuda_version() runs nvcc through subprocess"
"$demo/venv/bin/python" -c "$probe" 2>&1 | tail -1 || true

step "plan: the exact diff, nothing written"
run "$sp" plan "$root/recipes/flashinfer-dynamo.yaml"

step "apply"
run "$sp" apply -q "$root/recipes/flashinfer-dynamo.yaml"
"$demo/venv/bin/python" -c "$probe"

step "apply again: idempotent"
run "$sp" apply -q "$root/recipes/flashinfer-dynamo.yaml"

step "list"
run "$sp" list

step "verify"
run "$sp" verify

step "show: the applied patch (git apply -R in site-packages reverses it)"
run "$sp" show flashinfer-dynamo

step "the history is plain git"
run git --git-dir "$demo/venv/.sitepatch" log --format='%h %s'

step "pip install -U flashinfer-python (0.6.0): pip rewrites the patched files"
run "$python" -m pip --python "$demo/venv/bin/python" install --quiet --no-index --no-deps \
  --disable-pip-version-check -U "$demo"/wheels/flashinfer_python-0.6.0-*.whl
"$demo/venv/bin/python" -c "$probe" 2>&1 | tail -1 || true

step "status: what the upgrade took away, and the command that puts it back"
run "$sp" status || true

step "apply again: the recipe names functions, so it applies to 0.6.0 (fp4_quantize moved)"
run "$sp" apply -q "$root/recipes/flashinfer-dynamo.yaml"
"$demo/venv/bin/python" -c "$probe"

step "rollback: back to exactly what pip installed for 0.6.0"
run "$sp" rollback -q flashinfer-dynamo
"$demo/venv/bin/python" -c "$probe" 2>&1 | tail -1 || true
run "$sp" verify
