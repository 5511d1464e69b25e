#!/usr/bin/env bash
# torch_bench_runs_test.sh — PyTorch's side of the side-by-side tables (reference/torch_ddp_bench.py,
# which reference/compare_with_torch.py runs) still runs: every model it times, for 2 steps, each
# printing its JSON line (gpt_tiny at 2 ranks, whose no_sync path is its own; toy_cnn in one
# process: an import, what broke). It had stopped importing once (its model moved to
# torch_ddp_oracle_models.py) and nothing noticed until a table was to be measured.
# Usage: torch_bench_runs_test.sh PYTHON
set -euo pipefail
python=$1
here=$(cd "$(dirname "$0")/../../reference" && pwd)
for run in toy_cnn:1 gpt_tiny:2; do
  model=${run%:*}
  out=$("$python" "$here/torch_ddp_bench.py" --model "$model" --world-size "${run#*:}" \
        --local-batch 4 --warmup 1 --steps 2)
  line=$(tail -n 1 <<<"$out")
  if [[ $line != *"\"model\": \"$model\""*"\"step_p50_s\""* ]]; then
    echo "torch_ddp_bench.py --model $model printed no timing line: $out" >&2
    exit 1
  fi
done
echo "torch_ddp_bench.py ran toy_cnn and gpt_tiny"
