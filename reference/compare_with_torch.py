#!/usr/bin/env python3
"""compare_with_torch.py — ddpbench's DDP steps beside PyTorch's, measured alternately in one run.

Reproduces the side-by-side tables of reports/METRICS.md. For each config (scenario, per-rank
batch) and each of --rounds rounds, in this order: PyTorch single-process training
(reference/torch_ddp_bench.py --world-size 1), PyTorch's Python DDP over gloo (--world-size K),
then `ddpbench run --modes single,ddp --perf-only` with the same model, per-rank batch, optimizer
and threads, once per ddpbench engine: --ddp-impl c10d (PyTorch's own Reducer driven by ddpbench:
the same reducer as Python's DDP, so the difference is the harness around it) and bucketed
(ddpbench's own engine). Alternating keeps a noisy machine's drift out of the ratios; medians over
rounds are reported. Step times are p50 of the timed steps, the max over ranks per step on both
sides.

Columns: step = p50 seconds per DDP step; ratio = ddpbench / PyTorch (below 1: ddpbench is faster);
scaling efficiency = samples/s(K ranks) / (K x samples/s(one process at the per-rank batch)), weak
scaling, as ddpbench reports it. "PyTorch, same malloc" is PyTorch's DDP step with the glibc
malloc thresholds every ddpbench process sets for itself (harness/runtime/host_allocator.h).

    /usr/bin/python3 reference/compare_with_torch.py --ddpbench build/harness/ddpbench \
        [--rounds 3] [--configs toy_cnn:8,cifar_resnet18:32] [--world-size 2] [--backend gloo|shm|mpi]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH_MODEL = {"toy_cnn": "toy_cnn", "cifar_resnet18": "resnet18", "gpt_tiny": "gpt_tiny"}
# Timed steps per config: enough for a stable p50, short enough for three rounds in minutes.
STEPS = {"toy_cnn": (20, 400), "cifar_resnet18": (3, 15), "gpt_tiny": (20, 400)}
# What every ddpbench process sets at start (harness/runtime/host_allocator.h), through glibc's
# own environment variables: PyTorch's side once more with them separates the allocator's share
# of the difference from the engine's.
TUNED_MALLOC = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(1 << 30)}


def torch_side(python, scenario, world, local_batch, threads, tuned_malloc=False):
    warmup, steps = STEPS[scenario]
    env = dict(os.environ, **(TUNED_MALLOC if tuned_malloc else {}))
    out = subprocess.run(
        [python, os.path.join(HERE, "torch_ddp_bench.py"), "--model", TORCH_MODEL[scenario],
         "--world-size", str(world), "--local-batch", str(local_batch), "--warmup", str(warmup),
         "--steps", str(steps), "--threads", str(threads)],
        check=True, capture_output=True, text=True, env=env).stdout
    r = json.loads(out.strip().splitlines()[-1])
    return {"step": r["step_p50_s"], "samples_per_s": r["samples_per_s"], "phases": r["phases"]}


def ddpbench_side(binary, scenario, world, local_batch, threads, backend, impl):
    warmup, steps = STEPS[scenario]
    with tempfile.TemporaryDirectory(prefix="compare_with_torch_") as tmp:
        cmd = [binary, "run", "--scenario", scenario, "--gpus", str(world), "--modes",
               "single,ddp", "--perf-only", "--batch-size", str(local_batch * world), "--warmup",
               str(warmup), "--steps", str(steps), "--threads", str(threads), "--quiet",
               "--out", os.path.join(tmp, "out")]
        if backend == "mpi":
            cmd = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(world)] + cmd
        cmd += ["--backend", backend, "--ddp-impl", impl]
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        with open(os.path.join(tmp, "out", "report.json")) as f:
            report = json.load(f)
    by_mode = {r["mode"]: r for r in report["results"]}
    ddp, single = by_mode["ddp"]["throughput"], by_mode["single"]["throughput"]
    return {"step": ddp["step_time_p50_s"], "single_step": single["step_time_p50_s"],
            "samples_per_s": ddp["samples_per_s"], "single_samples_per_s": single["samples_per_s"],
            "phases": ddp["phases"], "efficiency": by_mode["ddp"]["scaling_efficiency"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ddpbench", required=True, help="the ddpbench binary")
    ap.add_argument("--python", default="/usr/bin/python3", help="interpreter with torch")
    ap.add_argument("--configs", default="toy_cnn:8,cifar_resnet18:32",
                    help="scenario:per-rank-batch, comma-separated")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--world-size", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1, help="intra-op threads per rank")
    ap.add_argument("--backend", choices=["gloo", "shm", "mpi"], default="gloo",
                    help="ddpbench's backend (PyTorch's side always uses gloo)")
    args = ap.parse_args()
    configs = []
    for item in args.configs.split(","):
        name, _, batch = item.partition(":")
        if name not in TORCH_MODEL or not batch.isdigit() or int(batch) < 1:
            ap.error(f"--configs: '{item}' is not scenario:batch with a scenario in "
                     f"{sorted(TORCH_MODEL)}")
        configs.append((name, int(batch)))
    if not os.access(args.ddpbench, os.X_OK):
        ap.error(f"--ddpbench {args.ddpbench} is not an executable; build it with ci/build.sh")

    K = args.world_size
    if args.backend != "gloo":
        ap.error("--ddp-impl c10d runs over gloo only; compare other backends with an older "
                 "revision's bucketed-only table")
    print("| config | PyTorch DDP step | ddpbench c10d step (ratio) | ddpbench bucketed step (ratio) "
          "| scaling efficiency PyTorch / c10d / bucketed | single step PyTorch / ddpbench | "
          "PyTorch DDP step, same malloc (c10d ratio, bucketed ratio) |")
    print("|---|---|---|---|---|---|---|")
    for scenario, batch in configs:
        rows = []
        for _ in range(args.rounds):
            t1 = torch_side(args.python, scenario, 1, batch, args.threads)
            tk = torch_side(args.python, scenario, K, batch, args.threads)
            tm = torch_side(args.python, scenario, K, batch, args.threads, tuned_malloc=True)
            c = ddpbench_side(args.ddpbench, scenario, K, batch, args.threads, args.backend,
                              "c10d")
            d = ddpbench_side(args.ddpbench, scenario, K, batch, args.threads, args.backend,
                              "bucketed")
            rows.append({"torch_step": tk["step"], "c10d_step": c["step"], "ddp_step": d["step"],
                         "torch_malloc_step": tm["step"],
                         "torch_eff": tk["samples_per_s"] / (K * t1["samples_per_s"]),
                         "c10d_eff": c["efficiency"], "ddp_eff": d["efficiency"],
                         "torch_single": t1["step"], "ddp_single": d["single_step"],
                         "c10d_phases": c["phases"], "ddp_phases": d["phases"],
                         "torch_phases": tk["phases"]})
            print(f"<!-- {scenario} b{batch} round: {json.dumps(rows[-1])} -->", file=sys.stderr)
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0] if k.endswith(
            ("step", "eff", "single"))}
        fmt = (lambda s: f"{s * 1e3:.2f} ms") if med["torch_step"] < 0.05 else (
            lambda s: f"{s:.3f} s")
        t, tm = med["torch_step"], med["torch_malloc_step"]
        print(f"| {scenario}, {K} ranks x batch {batch} | {fmt(t)} | "
              f"{fmt(med['c10d_step'])} ({med['c10d_step'] / t:.2f}) | "
              f"{fmt(med['ddp_step'])} ({med['ddp_step'] / t:.2f}) | "
              f"{med['torch_eff']:.2f} / {med['c10d_eff']:.2f} / {med['ddp_eff']:.2f} | "
              f"{fmt(med['torch_single'])} / {fmt(med['ddp_single'])} | "
              f"{fmt(tm)} ({med['c10d_step'] / tm:.2f}, {med['ddp_step'] / tm:.2f}) |")
    print(f"\n({args.rounds} alternating rounds, medians; {args.threads} thread(s) per rank; "
          f"PyTorch {subprocess.run([args.python, '-c', 'import torch; print(torch.__version__)'], capture_output=True, text=True).stdout.strip()} over gloo)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
