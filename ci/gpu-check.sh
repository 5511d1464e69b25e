#!/usr/bin/env bash
# gpu-check.sh — ddpbench's self-check on a GPU node. Builds ddpbench against the PyTorch that
# `python3` imports, runs the GPU tests, a short cifar_resnet18 run of every mode and DDP engine on
# the visible GPUs (NCCL across them where there are two or more), and ddpbench's step times beside
# PyTorch's own on the same GPU (ci/torch_gpu_anchor.py). Prints one summary, PASS or FAIL per line.
#
#   bash ci/gpu-check.sh [OUTDIR]          OUTDIR (default gpu-check/) gets summary.txt and the logs
#
# Environment: PYTHON (default python3), GLOO_INCLUDE (a folder holding gloo/algorithm.h: pip's torch
# ships no gloo headers; /usr/include and /usr/local/include are searched too), DDPBENCH_BUILD_DIR
# (default build-gpu), GPU_CHECK_PARTS (default "build tests modes perf"; a part needs the build).
# Exit: 0 every line PASS, 1 some line FAIL, 2 this node cannot run the check (the line says why).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
out="${1:-gpu-check}"
python="${PYTHON:-python3}"
build="${DDPBENCH_BUILD_DIR:-build-gpu}"
parts="${GPU_CHECK_PARTS:-build tests modes perf}"
bin="$build/harness/ddpbench"
summary="$out/summary.txt"
failed=0
say() { echo "$*" | tee -a "$summary"; }
verdict() {  # verdict NAME OK DETAIL
  if [ "$2" = 1 ]; then say "PASS  $1: $3"; else say "FAIL  $1: $3"; failed=1; fi
}
has_part() { [[ " $parts " == *" $1 "* ]]; }

# --- what this node is ----------------------------------------------------------------------
gpus=$("$python" -c 'import torch; print(torch.cuda.device_count() if torch.cuda.is_available() else 0)' 2>/dev/null) ||
  { echo "gpu-check: $python cannot import torch; install PyTorch (pip install torch) or set PYTHON" >&2; exit 2; }
[ "$gpus" -ge 1 ] ||
  { echo "gpu-check: $python's torch sees no CUDA device; run this on a GPU node with a CUDA build of PyTorch" >&2; exit 2; }
mkdir -p "$out" || { echo "gpu-check: cannot create $out; pass a writable OUTDIR" >&2; exit 2; }
: >"$summary"
say "node  $("$python" -c 'import torch; p=torch.cuda.get_device_properties(0); print(f"{torch.cuda.device_count()} x {p.name}, torch {torch.__version__}, CUDA {torch.version.cuda}, NCCL {".".join(map(str, torch.cuda.nccl.version()))}")'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"

# --- build ------------------------------------------------------------------------------------
if has_part build; then
  gloo=""
  for dir in ${GLOO_INCLUDE:-} /usr/include /usr/local/include; do
    [ -f "$dir/gloo/algorithm.h" ] && { gloo="$dir"; break; }
  done
  [ -n "$gloo" ] || { echo "gpu-check: no gloo headers (gloo/algorithm.h) found; pip's torch ships none: install libgloo-dev or set GLOO_INCLUDE=DIR" >&2; exit 2; }
  root=$("$python" -c 'import os, torch; print(os.path.dirname(torch.__file__))')
  t0=$SECONDS
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$root" \
      -DCMAKE_CXX_FLAGS="-isystem $gloo" -DDDPBENCH_ORACLE_PYTHON="$(command -v "$python")" \
      >"$out/configure.log" 2>&1 &&
    cmake --build "$build" -j"$(nproc)" >"$out/build.log" 2>&1
  rc=$?
  cuda=0; grep -q 'libtorch is a CUDA build' "$out/configure.log" && cuda=1
  ok=0; [ $rc -eq 0 ] && [ $cuda = 1 ] && ok=1
  verdict build $ok "exit $rc in $((SECONDS - t0)) s; $([ $cuda = 1 ] && echo 'CUDA + NCCL paths compiled' || echo 'configure found no CUDA libtorch + NCCL (configure.log)')"
  [ $ok = 1 ] || { tail -20 "$out/build.log" 2>/dev/null; exit 1; }
fi
[ -x "$bin" ] || { echo "gpu-check: no ddpbench binary at $bin; run the build part first" >&2; exit 2; }

# --- the GPU tests: every one runs here, none may skip ---------------------------------------
if has_part tests; then
  t0=$SECONDS
  ctest --test-dir "$build" -L gpu --output-on-failure >"$out/ctest-gpu.log" 2>&1
  rc=$?
  skipped=$(grep -c '\[  SKIPPED \] [A-Za-z]' "$out/ctest-gpu.log")
  ok=0; [ $rc -eq 0 ] && [ "$skipped" = 0 ] && ok=1
  verdict "gpu tests" $ok "$(grep -E 'tests passed|tests failed' "$out/ctest-gpu.log" | tail -1), $skipped skipped, $((SECONDS - t0)) s"
  grep -E '^\s*[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Subprocess aborted|Skipped|Not Run)\)' \
    "$out/ctest-gpu.log" | sed 's/^/      /' | tee -a "$summary"
fi

# --- every mode and engine, judged against single-device training ---------------------------
run_judged() {  # run_judged NAME ARGS...: a short check run; PASS needs exit 0 and verdict pass
  local name=$1; shift
  local dir="$out/run-$name"
  rm -rf "$dir"
  "$bin" run --scenario cifar_resnet18 --device cuda --steps 5 --batch-size 256 --eval-size 0 \
    --check-only --quiet --out "$dir" "$@" >"$out/run-$name.log" 2>&1
  local rc=$? v
  v=$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$dir/report.json" 2>/dev/null || echo none)
  local ok=0; [ $rc -eq 0 ] && [ "$v" = pass ] && ok=1
  verdict "$name" $ok "exit $rc, verdict $v ($*)"
}
if has_part modes; then
  if [ "$gpus" -ge 2 ]; then
    run_judged every-mode-nccl --gpus "$gpus" --modes single,dp,ddp --backend nccl
    run_judged c10d-engine --gpus "$gpus" --modes single,ddp --ddp-impl c10d --backend gloo
  else
    run_judged every-mode-nccl --gpus 1 --modes single,dp,ddp --backend nccl
    # Two ranks on one GPU: NCCL refuses a shared device, gloo carries CUDA tensors.
    run_judged ddp-two-ranks-gloo --gpus 2 --share-gpus --modes single,ddp --backend gloo
    run_judged c10d-engine --gpus 2 --share-gpus --modes single,ddp --ddp-impl c10d --backend gloo
  fi
fi

# --- step times beside PyTorch's own, one GPU, global batch 256 -------------------------------
perf_ms() {  # perf_ms NAME ARGS...: ddpbench's median step in ms, or "-"
  local dir="$out/perf-$1"; shift
  rm -rf "$dir"
  "$bin" run --scenario cifar_resnet18 --device cuda --perf-only --warmup 10 --steps 60 \
    --batch-size 256 --eval-size 0 --quiet --out "$dir" "$@" >"$dir.log" 2>&1 || { echo -; return; }
  "$python" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(round(r["results"][-1]["throughput"]["step_time_p50_s"]*1e3, 3))' \
    "$dir/report.json" 2>/dev/null || echo -
}
if has_part perf; then
  "$python" ci/torch_gpu_anchor.py 256 60 10 >"$out/torch-anchor.log" 2>&1
  anchor() { "$python" -c 'import json,sys
for line in open(sys.argv[1]):
    if line.startswith("{") and json.loads(line)["what"] == sys.argv[2]: print(json.loads(line)["step_p50_ms"])' "$out/torch-anchor.log" "$1" 2>/dev/null; }
  single=$(perf_ms single --modes single)
  dp1=$(perf_ms dp1 --modes dp --gpus 1)
  ddp1=$(perf_ms ddp-nccl1 --modes ddp --gpus 1 --backend nccl)
  for row in "single $single $(anchor single)" "dp1 $dp1 $(anchor dp1)" "ddp_nccl1 $ddp1 $(anchor ddp_nccl1)"; do
    # shellcheck disable=SC2086  # a row is three words
    set -- $row
    what=$1; ours=$2; torch=${3:--}
    if [ "$ours" = - ] || [ "$torch" = - ]; then
      verdict "perf $what" 0 "ddpbench ${ours} ms, PyTorch ${torch} ms (a run failed: $out/perf-$what.log, $out/torch-anchor.log)"
    else
      verdict "perf $what" 1 "ddpbench ${ours} ms, PyTorch ${torch} ms per step, ratio $("$python" -c "print(round($ours/$torch, 2))")x"
    fi
  done
  # Where ddpbench's step goes (the report's phase means), to find what to make faster.
  for what in single dp1 ddp-nccl1; do
    "$python" -c 'import json,sys
p = json.load(open(sys.argv[1]))["results"][-1]["throughput"]["phases"]
print("      %-10s phases ms: " % sys.argv[2] + ", ".join("%s %.3f" % (k[:-2], v * 1e3) for k, v in p.items()))' \
      "$out/perf-$what/report.json" "$what" 2>/dev/null | tee -a "$summary"
  done
  if [ "$single" != - ] && [ "$ddp1" != - ] && [ "$dp1" != - ]; then
    say "      ddpbench ddp nccl world 1 / single $("$python" -c "print(round($ddp1/$single, 3))"), dp 1 replica / single $("$python" -c "print(round($dp1/$single, 3))")"
  fi
fi

say "$([ $failed = 0 ] && echo 'gpu-check: PASS' || echo 'gpu-check: FAIL') (summary in $summary)"
exit $failed
