#!/usr/bin/env python3
"""compare_zero_with_fsdp.py — ddpbench's sharded steps (zero stages 2 and 3) beside its DDP step and
PyTorch's FSDP2, measured alternately in one run.

Reproduces the sharded-step table of reports/METRICS.md ("Overlapped sharded steps"). For each of
--rounds rounds, in this order: PyTorch's Python DDP over gloo (reference/torch_ddp_bench.py),
FSDP2's fully_shard on the whole model with reshard_after_forward=False (`--wrap fsdp`: one unit,
what ddpbench's stage 3 shards), FSDP2 on every residual block and the root (`--wrap fsdp-blocks`:
its usual recipe, which prefetches the next block's all-gather), then `ddpbench run --modes
ddp,zero --zero-stage N --perf-only` for each stage of --stages (ddpbench's DDP and zero timed in
the same process tree, one after the other). Medians over rounds; step = p50 seconds per step, the
max over ranks per step on both sides. Run it with the PyTorch that ddpbench was built against (FSDP2
needs 2.x), e.g. the CI's 2.11 environment and build-torch-python/:

    $(bash ci/torch-venv.sh) reference/compare_zero_with_fsdp.py \\
        --ddpbench build-torch-python/harness/ddpbench [--rounds 3] [--stages 2,3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from compare_with_torch import STEPS, torch_side  # noqa: E402  (same folder)

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIO = "cifar_resnet18"


def torch_wrapped(python, world, local_batch, threads, wrap):
    """PyTorch's p50 step wrapped in `wrap`. FSDP2 on gloo sometimes aborts at exit, after it has
    printed its figures (one run in several on this machine): those figures are kept, and said
    so; a run that printed none is tried once more."""
    warmup, steps = STEPS[SCENARIO]
    cmd = [python, os.path.join(HERE, "torch_ddp_bench.py"), "--model", "resnet18", "--world-size",
           str(world), "--local-batch", str(local_batch), "--warmup", str(warmup), "--steps",
           str(steps), "--threads", str(threads), "--wrap", wrap]
    for attempt in (1, 2):
        run = subprocess.run(cmd, capture_output=True, text=True)
        lines = [l for l in run.stdout.strip().splitlines() if l.startswith("{")]
        if lines:
            if run.returncode != 0:
                print(f"note: torch_ddp_bench.py --wrap {wrap} exited {run.returncode} after its "
                      f"figures: {(run.stderr.strip().splitlines() or [''])[-1]}", file=sys.stderr)
            return json.loads(lines[-1])["step_p50_s"]
        print(f"note: torch_ddp_bench.py --wrap {wrap} failed (attempt {attempt}, exit "
              f"{run.returncode}): {(run.stderr.strip().splitlines() or [''])[-1]}", file=sys.stderr)
    raise SystemExit(f"torch_ddp_bench.py --wrap {wrap} failed twice:\n{run.stderr}")


def ddpbench_zero(binary, world, local_batch, threads, stage):
    """ddpbench's ddp and zero p50 steps, from one run."""
    warmup, steps = STEPS[SCENARIO]
    with tempfile.TemporaryDirectory(prefix="compare_zero_with_fsdp_") as tmp:
        subprocess.run(
            [binary, "run", "--scenario", SCENARIO, "--gpus", str(world), "--modes", "ddp,zero",
             "--zero-stage", str(stage), "--perf-only", "--batch-size", str(local_batch * world),
             "--warmup", str(warmup), "--steps", str(steps), "--threads", str(threads), "--quiet",
             "--out", os.path.join(tmp, "out")],
            check=True, capture_output=True, text=True)
        with open(os.path.join(tmp, "out", "report.json")) as f:
            report = json.load(f)
    p50 = {r["mode"]: r["throughput"]["step_time_p50_s"] for r in report["results"]}
    return p50["ddp"], p50["zero"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ddpbench", required=True, help="the ddpbench binary (built against this torch)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--stages", default="2,3", help="zero stages to time, comma-separated")
    ap.add_argument("--world-size", type=int, default=2)
    ap.add_argument("--local-batch", type=int, default=16, help="samples per rank per step")
    ap.add_argument("--threads", type=int, default=1, help="intra-op threads per rank")
    args = ap.parse_args()
    stages = [int(s) for s in args.stages.split(",")]
    if not os.access(args.ddpbench, os.X_OK):
        ap.error(f"--ddpbench {args.ddpbench} is not an executable; build it (ci/build.sh)")
    rows = {}  # name -> [p50 per round]
    for _ in range(args.rounds):
        rows.setdefault("PyTorch DDP", []).append(
            torch_side(sys.executable, SCENARIO, args.world_size, args.local_batch,
                       args.threads)["step"])
        for wrap, name in (("fsdp", "FSDP2, whole model"), ("fsdp-blocks", "FSDP2, per block")):
            rows.setdefault(name, []).append(
                torch_wrapped(sys.executable, args.world_size, args.local_batch, args.threads,
                              wrap))
        for stage in stages:
            ddp, zero = ddpbench_zero(args.ddpbench, args.world_size, args.local_batch,
                                      args.threads, stage)
            rows.setdefault(f"ddpbench ddp (beside stage {stage})", []).append(ddp)
            rows.setdefault(f"ddpbench zero stage {stage}", []).append(zero)
            rows.setdefault(f"stage {stage} / ddpbench ddp", []).append(zero / ddp)
    import torch  # for the version line only
    print(f"cifar_resnet18, {args.world_size} ranks x {args.local_batch}, {args.threads} thread(s), "
          f"torch {torch.__version__}, gloo, {args.rounds} round(s); medians")
    print("| what | p50 step (s) or ratio | rounds |")
    print("|---|---|---|")
    for name, values in rows.items():
        print(f"| {name} | {statistics.median(values):.4f} | "
              f"{', '.join(f'{v:.4f}' for v in values)} |")
    fsdp = statistics.median(rows["FSDP2, whole model"])
    blocks = statistics.median(rows["FSDP2, per block"])
    for stage in stages:
        zero = statistics.median(rows[f"ddpbench zero stage {stage}"])
        print(f"stage {stage} / FSDP2 whole model: {zero / fsdp:.2f}; "
              f"/ FSDP2 per block: {zero / blocks:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
