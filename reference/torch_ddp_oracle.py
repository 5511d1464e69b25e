#!/usr/bin/env python3
"""torch_ddp_oracle.py — PyTorch's own DistributedDataParallel on batches exported by ddpbench.

Pins down what torch.nn.parallel.DistributedDataParallel (gloo, CPU, one process per rank started
with torch.multiprocessing.spawn) computes from the same initial state and the same global batches:
rank 0's broadcast of parameters and buffers, bucketed allreduce averaged by world size,
`broadcast_buffers` before each forward (BatchNorm buffers are rank 0's local statistics), and
torch.optim.SGD created after wrapping.

--batches FILE (written by ddpbench without TorchScript type tags, so that
torch.load reads it in 1.13 and, weights-only, in 2.6+) is a dict:
  "meta"     {"model": "linear"|"toy_cnn"|"resnet18"|"tiny_resnet"|"gated_cnn"|"gated_heads"|"gpt_tiny"|
              "torchscript" (with "model_file": the file of `ddpbench run --model`, loaded with
              torch.jit.load), "num_classes", "world_size",
              "steps", "loss": "mse"|"rmse"|"cross_entropy"|"bce_one_hot" (with
              "label_smoothing", F.cross_entropy's), "lr", "momentum",
              "dampening", "weight_decay", "nesterov", "dtype": "float32"|"float64",
              "bucket_cap_mb", "broadcast_buffers"; optional: "optimizer": "sgd"|"adam"|"adamw",
              "betas", "eps" (Adam, AdamW), "no_decay" (rules: "1d" or name substrings; the
              parameters they match form a second group with weight_decay 0, nanoGPT's
              configure_optimizers), "no_decay_lr_scale" (that group's lr as a multiple of the
              scheduled rate, its own lr in torch's param_groups), "schedule": "constant"|"step"|"warmup_cosine"|"onecycle" with
              "total_steps", "pct_start" (torch's OneCycleLR, its other arguments default),
              "step_size", "gamma" (torch's StepLR, stepped after each optimizer step) and
              "warmup_steps", "decay_steps", "min_lr" (nanoGPT's get_lr(it) written into every
              group before step it), "clip_grad_norm" (clip_grad_norm_(max_norm) after backward,
              0 = none); DDP's constructor arguments "find_unused_parameters", "static_graph",
              "gradient_as_bucket_view", "bucket_cap_given" (False: bucket_cap_mb is not passed,
              as a user who keeps the default), "first_bucket_mb" (dist._DEFAULT_FIRST_BUCKET_BYTES),
              "comm_hook": "allreduce"|"fp16"|"bf16" (default_hooks' compress hooks),
              "amp": "off"|"bf16"|"fp16" (torch.autocast around forward and loss; fp16 with
              torch.amp.GradScaler(init_scale="grad_scaler_init",
              growth_interval="growth_interval"): unscale_ before clipping, step, update),
              "accumulation_steps" (A, default 1: each rank's local batch is cut into A equal
              micro-batches, each loss divided by A and backpropagated, the optimizer stepping
              once), "no_sync" (default True: the first A-1 micro-steps inside ddp.no_sync()),
              "channels_last" (default False: model.to(memory_format=torch.channels_last) and
              every 4-D input batch in that format)}
  "init"     name -> tensor, the state_dict before training, in the run dtype
  "inputs"   one GLOBAL batch per step; rank r's local batch is inputs[s].chunk(world_size)[r]
             (int64 token ids for gated_cnn, padded with 0 to the global batch's longest)
  "targets"  same layout (int64 labels for cross_entropy, float for mse)
  "chunk_sizes", "epochs" (optional, uneven rank batches) int64 [steps, world_size], [steps]:
             rank r's local batch is inputs[s].split(chunk_sizes[s])[r]; a rank whose chunk is 0
             has run out of the epoch's batches, and each epoch's loop runs inside
             torch.distributed.algorithms.join.Join([ddp] (+ the ZeroRedundancyOptimizer))
  "forward_seeds" (optional) int64 [steps, world_size]: torch.manual_seed(forward_seeds[s][r])
             right before rank r's forward of step s, as ddpbench seeds its ranks (dropout draws
             the same masks; modes/common/forward_draws.h)
Each step: zero_grad, forward on the local batch (each micro-batch under accumulation), mean
loss, backward, step. The recorded loss is
all_reduce(sum of local losses) / world_size. Under fp16 the result also holds "scales" (the scale
each step's backward used) and "skipped" (the steps GradScaler skipped), on every rank alike or the
oracle fails.

--zero wraps the optimizer in torch.distributed.optim.ZeroRedundancyOptimizer (ZeRO stage 1 as
PyTorch's users run it: DDP's allreduce, each rank stepping only the parameters the sorted-greedy
partition gives it, then every parameter broadcast from its owner): the oracle of ddpbench's zero
mode (state_zero.pt). With --zero-state FILE, rank 0 also saves the optimizer's consolidated state
dict (consolidate_state_dict(to=0), then state_dict()).

--fsdp shards the model instead with torch.distributed.fsdp.fully_shard (FSDP2, torch 2.6 or later;
it runs on the CPU over gloo, FSDP in 1.13 does not) on the root module only, reshard_after_forward
False: every parameter sharded on dim 0, all-gathered before forward, gradients reduce-scattered
(averaged), the optimizer stepping the shards: the oracle of ddpbench's zero mode at stage 3. FSDP
broadcasts no buffers; the scenarios it is run on have none. A run exported with --shard-group S
(HSDP: meta "shard_group") is sharded over init_device_mesh("cpu", (K/S, S)) instead: each
parameter laid out (Replicate(), Shard(0)), gradients reduce-scattered within the shard group and
all-reduced across the replicas with FSDP2's own divide factors, the oracle of zero's HSDP.

--single trains PyTorch's single-device training instead: the plain model (no process group, no
DDP wrapper, no comm hook) on each whole global batch, the oracle for ddpbench's `single` mode
(state_single.pt of a run whose --modes is single alone, so that it trained free-running).

--out FILE gets torch.save({"state": rank 0's model.module.state_dict(), "losses": float64 [steps],
"torch_version": str}). With --check STATE... (ddpbench states, e.g. state_ddp.pt; several are each
checked against the one training run) every tensor is compared with
torch.allclose semantics, |ddpbench - torch| <= atol + rtol*|torch| (integer buffers must be equal);
prints one OK/FAIL line naming the worst tensor and exits 0/1.

    /usr/bin/python3 reference/torch_ddp_oracle.py --batches B.pt --out O.pt [--check S.pt]
"""
import argparse
import math
import os
import sys
import tempfile

import torch
import torch.multiprocessing as mp

# A rank's training (torch_ddp_oracle_rank.py) and the models it builds (torch_ddp_oracle_models.py)
# sit beside this file, whose folder Python puts first on the import path.
from torch_ddp_oracle_rank import worker


def check(ref, got, atol, rtol, who):
    """Compares ddpbench's state (got) with the oracle's (ref, trained by `who`); returns (ok,
    message)."""
    missing, extra = sorted(set(ref) - set(got)), sorted(set(got) - set(ref))
    if missing or extra:
        return False, f"FAIL: tensor names differ: missing in ddpbench {missing}, extra {extra}"
    if not ref:
        return False, "FAIL: empty state"
    diffs, bad = {}, []
    for name, want in ref.items():
        have = got[name]
        if have.dtype != want.dtype or have.shape != want.shape:
            return False, (f"FAIL: {name}: ddpbench {have.dtype}{list(have.shape)} vs "
                           f"{who} {want.dtype}{list(want.shape)}")
        d = (have - want).abs().max().item() if want.numel() else 0.0
        diffs[name] = math.inf if math.isnan(d) else float(d)
        if want.is_floating_point():
            close = torch.isclose(have, want, rtol=rtol, atol=atol).all().item()
        else:
            close = torch.equal(have, want)
        if not close:
            bad.append(name)
    worst = max(bad or diffs, key=diffs.get)
    if bad:
        return False, (f"FAIL: max |ddpbench - {who}| = {diffs[worst]:.3e} (tensor {worst}); "
                       f"{len(bad)} of {len(ref)} tensors outside atol {atol} rtol {rtol}")
    return True, (f"OK: max |ddpbench - {who}| = {diffs[worst]:.3e} (tensor {worst}, "
                  f"atol {atol} rtol {rtol})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", required=True, help="batches file exported by ddpbench")
    ap.add_argument("--out", help="where to torch.save the oracle's result (temp file if omitted)")
    ap.add_argument("--check", metavar="STATE", nargs="+",
                    help="ddpbench states (e.g. state_ddp.pt) to compare, each against this run")
    ap.add_argument("--atol", type=float, default=1e-5)
    ap.add_argument("--rtol", type=float, default=1.3e-6)
    ap.add_argument("--zero", action="store_true",
                    help="DDP with torch's ZeroRedundancyOptimizer: the oracle of the zero mode")
    ap.add_argument("--zero-state", metavar="FILE",
                    help="with --zero: where rank 0 saves the consolidated optimizer state dict")
    ap.add_argument("--fsdp", action="store_true",
                    help="torch's FSDP2 fully_shard instead of DDP: the oracle of zero stage 3")
    ap.add_argument("--single", action="store_true",
                    help="PyTorch's single-device training on each whole global batch, not DDP")
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu",
                    help="train the ranks on CUDA devices (gloo, so ranks may share one GPU)")
    args = ap.parse_args()
    if not args.out and not args.check:
        ap.error("give --out, --check or both")
    if args.zero and args.single:
        ap.error("--zero trains ranks and --single one device: pass one of them")
    if args.fsdp and (args.zero or args.single):
        ap.error("--fsdp shards the model itself: drop --zero and --single")
    if args.fsdp:
        try:
            from torch.distributed.fsdp import fully_shard  # noqa: F401
        except Exception:  # 1.13's FSDP does not even import on Python 3.11
            ap.error(f"--fsdp needs torch.distributed.fsdp.fully_shard (torch 2.6 or later); "
                     f"this is torch {torch.__version__}: run the oracle with a newer torch")
    if args.zero_state and not args.zero:
        ap.error("--zero-state saves ZeroRedundancyOptimizer's state: add --zero")
    meta = torch.load(args.batches)["meta"]
    world = int(meta["world_size"])
    tmp = tempfile.TemporaryDirectory(prefix="torch_ddp_oracle_")
    out = args.out or os.path.join(tmp.name, "oracle.pt")
    rendezvous = os.path.join(tmp.name, "rendezvous")
    if args.device == "cuda" and not torch.cuda.is_available():
        ap.error("--device cuda: this torch sees no CUDA device; use --device cpu")
    # On the CPU the ranks are forked: they start with torch already imported (1.3 s a process
    # saved; the parent has only unpickled the batches, no thread pool or process group yet).
    # CUDA cannot be used in a child forked after the parent touched it: those ranks are spawned.
    if args.single:
        worker(0, args.batches, out, rendezvous, args.device, single=True)
    else:
        mp.start_processes(worker, args=(args.batches, out, rendezvous, args.device, False,
                                         args.zero, args.zero_state, args.fsdp),
                           nprocs=world, join=True,
                           start_method="spawn" if args.device == "cuda" else "fork")
    result = torch.load(out)
    losses = result["losses"].tolist()
    shard_group = int(meta.get("shard_group", 0))
    mesh = f" on a ({world // shard_group}, {shard_group}) mesh (HSDP)" if shard_group else ""
    trained = ("single device" if args.single else f"FSDP2 fully_shard world_size {world}{mesh}"
               if args.fsdp else
               f"DDP{' + ZeroRedundancyOptimizer' if args.zero else ''} world_size {world}")
    print(f"torch {result['torch_version']} {trained}, {meta['model']}, "
          f"{len(losses)} steps, losses {[float(f'{v:.6g}') for v in losses]}")
    if result.get("scales"):
        print(f"GradScaler scales {[float(f'{v:.6g}') for v in result['scales']]}, "
              f"skipped steps {result['skipped']}")
    if not args.check:
        return 0
    if meta.get("lockstep", False) and not args.single:  # single itself is never lockstepped
        print("NOTE: the run judged its modes in lockstep (single in --modes, below float64): its "
              "state files are the states after the last lockstep step, not free-running "
              "trajectories; run ddpbench with --modes ddp (or --comparison free) for those")
    all_ok = True
    for path in args.check:
        ok, msg = check(result["state"], torch.load(path, weights_only=True), args.atol, args.rtol,
                        "torch single device" if args.single
                        else "torch FSDP2" if args.fsdp
                        else "torch ZeroRedundancyOptimizer" if args.zero else "torch DDP")
        print(f"{os.path.basename(path)}: {msg}" if len(args.check) > 1 else msg)
        all_ok = all_ok and ok
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
