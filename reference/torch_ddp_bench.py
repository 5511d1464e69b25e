#!/usr/bin/env python3
"""torch_ddp_bench.py — PyTorch's own training step timed the way ddpbench's perf phase times its own.

The PyTorch side of the side-by-side table in reports/METRICS.md (reference/compare_with_torch.py
runs both sides alternately). One process per rank (torch.multiprocessing.spawn), gloo on the CPU,
`--threads` intra-op threads per rank (ddpbench's default on a 2-core host with 2 ranks: 1).
`--world-size 1` is plain single-process training without the DDP wrapper (the single-device
baseline of weak scaling); more ranks wrap the model in torch.nn.parallel.DistributedDataParallel,
or with `--wrap fsdp` in FSDP2's fully_shard on the whole model (reshard_after_forward=False: one
unit, as ddpbench's zero stage 3), or with `--wrap fsdp-blocks` fully_shard on each residual block
and then the root (FSDP2's usual recipe, whose forward and backward prefetch the next block's
all-gather; PyTorch 2.x only).

What is timed per step, as in ddpbench (modes/common/step_loop.cpp): `data` (the DataLoader yields
the local batch: num_workers=0, DistributedSampler with shuffle, the scenario's per-sample
transform on in-memory uint8 CIFAR-shaped images), `forward` (model + loss), `backward` (DDP's
bucketed allreduces overlap it and it returns after the last one is waited for, so it is
ddpbench's backward + comm_wait), `optimizer` (SGD step, zero_grad). The step time of a rank is
their sum; a step's time is the max over ranks (what ddpbench reports). Prints one JSON line:
{"step_p50_s", "phases": {...means...}, "samples_per_s", ...}.

    /usr/bin/python3 reference/torch_ddp_bench.py --model toy_cnn --world-size 2 --local-batch 8
"""
import argparse
import contextlib
import datetime
import json
import os
import statistics
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F
import torchvision

# The models as the oracle builds them, defined once for both scripts.
from torch_ddp_oracle_models import GptTiny, ToyCNN
from torch_ddp_oracle_rank import scheduled_lr

# The scenarios' recipes (scenarios/builtin/toy_cnn.cpp, scenarios/builtin/cifar_resnet18.cpp).
RECIPES = {
    "toy_cnn": {"crop_flip": False, "mean": (0.5, 0.5, 0.5), "std": (0.5, 0.5, 0.5),
                "sgd": {"lr": 0.001, "momentum": 0.9}},
    "resnet18": {"crop_flip": True, "mean": (0.4914, 0.4822, 0.4465),
                 "std": (0.2023, 0.1994, 0.2010),
                 "sgd": {"lr": 0.02, "momentum": 0.9, "weight_decay": 1e-4, "nesterov": True}},
    # scenarios/builtin/gpt_tiny.cpp: nanoGPT's train.py recipe.
    "gpt_tiny": {"adamw": {"lr": 1e-3, "betas": (0.9, 0.95), "weight_decay": 0.1},
                 "warmup": 2, "decay": 20, "min_lr": 1e-4, "clip": 1.0, "accumulation": 2},
}
DATASET_SIZE = 8192  # in memory, uint8 3x32x32: enough distinct samples for any timed run here


class CifarLike(torch.utils.data.Dataset):
    """uint8 images in memory with the scenario's transform, written with tensor ops as a user
    would (ToTensor, RandomCrop(32, padding=4), RandomHorizontalFlip, Normalize)."""

    def __init__(self, recipe, seed):
        g = torch.Generator().manual_seed(seed)
        self.images = torch.randint(0, 256, (DATASET_SIZE, 3, 32, 32), dtype=torch.uint8,
                                    generator=g)
        self.labels = torch.randint(0, 10, (DATASET_SIZE,), generator=g)
        self.crop_flip = recipe["crop_flip"]
        self.mean = torch.tensor(recipe["mean"]).view(3, 1, 1)
        self.std = torch.tensor(recipe["std"]).view(3, 1, 1)

    def __len__(self):
        return DATASET_SIZE

    def __getitem__(self, i):
        x = self.images[i].float().div_(255.0)
        if self.crop_flip:
            dy, dx = torch.randint(0, 9, (2,)).tolist()
            x = F.pad(x, (4, 4, 4, 4))[:, dy:dy + 32, dx:dx + 32]
            if torch.rand(()) < 0.5:
                x = x.flip(2)
        return (x - self.mean) / self.std, self.labels[i]


class TokensLike(torch.utils.data.Dataset):
    """gpt_tiny's data as a user holds it: token sequences in memory, x and y shifted by one."""

    def __init__(self, seed, vocab=64, block=16):
        g = torch.Generator().manual_seed(seed)
        self.seqs = torch.randint(0, vocab, (DATASET_SIZE, block + 1), generator=g)

    def __len__(self):
        return DATASET_SIZE

    def __getitem__(self, i):
        return self.seqs[i, :-1], self.seqs[i, 1:]


def gpt_optimizer(model, recipe):
    """nanoGPT's configure_optimizers: weight decay on tensors of 2+ dimensions only."""
    params = list(model.parameters())
    groups = [{"params": [p for p in params if p.dim() >= 2]},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, **recipe["adamw"])


def gpt_lr(recipe, it):
    """nanoGPT's get_lr, as the oracle computes it."""
    return scheduled_lr({"lr": recipe["adamw"]["lr"], "schedule": "warmup_cosine",
                         "warmup_steps": recipe["warmup"], "decay_steps": recipe["decay"],
                         "min_lr": recipe["min_lr"]}, it)


def gpt_step(model, opt, recipe, x, y, step, ddp):
    """One train.py step: accumulation micro-steps (no_sync on all but the last), clipping, the
    scheduled rate; returns the times of forward, backward (summed) and the optimizer."""
    micro = recipe["accumulation"]
    fwd = bwd = 0.0
    for m, (xm, ym) in enumerate(zip(x.chunk(micro), y.chunk(micro))):
        quiet = ddp and m < micro - 1
        with model.no_sync() if quiet else contextlib.nullcontext():
            t0 = time.perf_counter()
            loss = F.cross_entropy(model(xm), ym) / micro
            t1 = time.perf_counter()
            loss.backward()
            t2 = time.perf_counter()
        fwd, bwd = fwd + t1 - t0, bwd + t2 - t1
    t3 = time.perf_counter()
    torch.nn.utils.clip_grad_norm_(model.parameters(), recipe["clip"])
    for g in opt.param_groups:
        g["lr"] = gpt_lr(recipe, step)
    opt.step()
    opt.zero_grad()
    return fwd, bwd, time.perf_counter() - t3


def worker(rank, args, rendezvous, out_path):
    torch.set_num_threads(args.threads)
    world = args.world_size
    torch.manual_seed(args.seed)
    gpt = args.model == "gpt_tiny"
    model = (ToyCNN() if args.model == "toy_cnn" else GptTiny() if gpt
             else torchvision.models.resnet18(num_classes=10))
    dataset = TokensLike(args.seed) if gpt else CifarLike(RECIPES[args.model], args.seed)
    sampler = None
    if world > 1:
        dist.init_process_group("gloo", init_method="file://" + rendezvous, rank=rank,
                                world_size=world, timeout=datetime.timedelta(seconds=300))
        if args.wrap == "ddp":
            model = torch.nn.parallel.DistributedDataParallel(model)
        else:
            from torch.distributed.device_mesh import init_device_mesh
            from torch.distributed.fsdp import fully_shard
            mesh = init_device_mesh("cpu", (world,))
            if args.wrap == "fsdp-blocks":
                for layer in (model.layer1, model.layer2, model.layer3, model.layer4):
                    for block in layer:
                        fully_shard(block, mesh=mesh)
                fully_shard(model, mesh=mesh)
            else:
                fully_shard(model, mesh=mesh, reshard_after_forward=False)
        sampler = torch.utils.data.distributed.DistributedSampler(dataset, world, rank, seed=0)
    loader = torch.utils.data.DataLoader(dataset, batch_size=args.local_batch, sampler=sampler,
                                         shuffle=sampler is None, drop_last=True, num_workers=0)
    opt = (gpt_optimizer(model, RECIPES[args.model]) if gpt
           else torch.optim.SGD(model.parameters(), **RECIPES[args.model]["sgd"]))
    batches = iter(loader)
    phases = {"data": [], "forward": [], "backward": [], "optimizer": []}
    for step in range(args.warmup + args.steps):
        t0 = time.perf_counter()
        x, y = next(batches)
        t1 = time.perf_counter()
        if gpt:
            fwd, bwd, step_s = gpt_step(model, opt, RECIPES[args.model], x, y, step, world > 1)
            if step >= args.warmup:
                for name, dt in zip(phases, (t1 - t0, fwd, bwd, step_s)):
                    phases[name].append(dt)
            continue
        loss = F.cross_entropy(model(x), y)
        t2 = time.perf_counter()
        loss.backward()
        t3 = time.perf_counter()
        opt.step()
        opt.zero_grad()
        t4 = time.perf_counter()
        if step >= args.warmup:
            for name, dt in zip(phases, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
                phases[name].append(dt)
    mine = torch.tensor([phases[p] for p in phases], dtype=torch.float64)  # [4, steps]
    if world > 1:
        # The step's time is its slowest rank's, as ddpbench reports it.
        steps = mine.sum(0)
        dist.all_reduce(steps, op=dist.ReduceOp.MAX)
        dist.all_reduce(mine, op=dist.ReduceOp.MAX)
        del opt, model
        dist.barrier()  # FSDP2's last collectives done on every rank before its group goes
        dist.destroy_process_group()
    else:
        steps = mine.sum(0)
    if rank == 0:
        torch.save({"steps": steps, "phases": mine}, out_path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=sorted(RECIPES), required=True)
    ap.add_argument("--world-size", type=int, default=2)
    ap.add_argument("--local-batch", type=int, required=True, help="samples per rank per step")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--threads", type=int, default=1, help="intra-op threads per rank")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--wrap", choices=("ddp", "fsdp", "fsdp-blocks"), default="ddp",
                    help="what wraps the model at 2 ranks or more")
    args = ap.parse_args()
    if args.wrap == "fsdp-blocks" and args.model != "resnet18":
        ap.error("--wrap fsdp-blocks wraps resnet18's residual blocks: use --model resnet18")
    if args.world_size < 1 or args.local_batch < 1 or args.steps < 1 or args.warmup < 0:
        ap.error("--world-size, --local-batch and --steps must be >= 1, --warmup >= 0")
    if (args.warmup + args.steps) * args.local_batch * args.world_size > DATASET_SIZE:
        ap.error(f"at most {DATASET_SIZE} samples per run: lower --steps or --local-batch")
    with tempfile.TemporaryDirectory(prefix="torch_ddp_bench_") as tmp:
        out = os.path.join(tmp, "result.pt")
        mp.spawn(worker, args=(args, os.path.join(tmp, "rendezvous"), out),
                 nprocs=args.world_size, join=True)
        result = torch.load(out)
    steps = result["steps"].tolist()
    mean_step = statistics.fmean(steps)
    print(json.dumps({
        "torch": torch.__version__, "model": args.model, "world_size": args.world_size,
        "wrap": args.wrap,
        "local_batch": args.local_batch, "threads": args.threads, "steps": args.steps,
        "step_p50_s": statistics.median(steps),
        "phases": {p: float(v) for p, v in zip(("data_s", "forward_s", "backward_s",
                                                "optimizer_s"),
                                               result["phases"].mean(1).tolist())},
        "samples_per_s": args.local_batch * args.world_size / mean_step,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
