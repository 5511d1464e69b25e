#!/usr/bin/env python3
"""torch_ddp_oracle.py — PyTorch's own DistributedDataParallel on batches exported by ddpbench.

Pins down what torch.nn.parallel.DistributedDataParallel (gloo, CPU, one process per rank started
with torch.multiprocessing.spawn) computes from the same initial state and the same global batches:
rank 0's broadcast of parameters and buffers, bucketed allreduce averaged by world size,
`broadcast_buffers` before each forward (BatchNorm buffers are rank 0's local statistics), and
torch.optim.SGD created after wrapping.

--batches FILE (written by ddpbench without TorchScript type tags, so that
torch.load reads it in 1.13 and, weights-only, in 2.6+) is a dict:
  "meta"     {"model": "linear"|"toy_cnn"|"resnet18"|"tiny_resnet"|"gated_cnn"|"gated_heads"|
              "torchscript" (with "model_file": the file of `ddpbench run --model`, loaded with
              torch.jit.load), "num_classes", "world_size",
              "steps", "loss": "mse"|"rmse"|"cross_entropy"|"bce_one_hot", "lr", "momentum",
              "dampening", "weight_decay", "nesterov", "dtype": "float32"|"float64",
              "bucket_cap_mb", "broadcast_buffers"; optional: "optimizer": "sgd"|"adam",
              "betas", "eps" (Adam), "clip_grad_norm" (clip_grad_norm_(max_norm) after backward,
              0 = none); DDP's constructor arguments "find_unused_parameters", "static_graph",
              "gradient_as_bucket_view", "bucket_cap_given" (False: bucket_cap_mb is not passed,
              as a user who keeps the default), "first_bucket_mb" (dist._DEFAULT_FIRST_BUCKET_BYTES),
              "comm_hook": "allreduce"|"fp16"|"bf16" (default_hooks' compress hooks),
              "amp": "off"|"bf16"|"fp16" (torch.autocast around forward and loss; fp16 with
              torch.amp.GradScaler(init_scale="grad_scaler_init",
              growth_interval="growth_interval"): unscale_ before clipping, step, update),
              "accumulation_steps" (A, default 1: each rank's local batch is cut into A equal
              micro-batches, each loss divided by A and backpropagated, the optimizer stepping
              once), "no_sync" (default True: the first A-1 micro-steps inside ddp.no_sync())}
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
import contextlib
import datetime
import gc
import math
import os
import sys
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F


class ToyCNN(torch.nn.Module):
    """The PyTorch CIFAR-10 tutorial Net."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 6, 5)
        self.pool = torch.nn.MaxPool2d(2, 2)
        self.conv2 = torch.nn.Conv2d(6, 16, 5)
        self.fc1 = torch.nn.Linear(16 * 5 * 5, 120)
        self.fc2 = torch.nn.Linear(120, 84)
        self.fc3 = torch.nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class GatedCNN(torch.nn.Module):
    """scenarios/models/gated_cnn_net.h: the same parameter names, shapes and forward."""

    MIN_LENGTH = 15 + 14 * 7  # both blocks need at least one window

    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(15000, 64)
        for name in ("conv1_a", "conv1_b", "conv2_a", "conv2_b"):
            setattr(self, name, torch.nn.Conv1d(64, 64, 15, stride=7))
        self.fc1 = torch.nn.Linear(64, 128)
        self.fc2 = torch.nn.Linear(128, 2)
        torch.nn.init.xavier_uniform_(self.embedding.weight)

    def forward(self, tokens):
        if tokens.shape[1] < self.MIN_LENGTH:
            tokens = F.pad(tokens, (0, self.MIN_LENGTH - tokens.shape[1]))
        x = self.embedding(tokens).transpose(1, 2)
        x = self.conv1_a(x) * torch.sigmoid(self.conv1_b(x))
        x = self.conv2_a(x) * torch.sigmoid(self.conv2_b(x))
        return self.fc2(self.fc1(x.mean(2)))


class GatedHeads(torch.nn.Module):
    """scenarios/models/gated_heads_net.h: a trunk and two heads; the last input column routes each
    row to head_a (0) or head_b (1), and a head no row selects is not run (no gradient)."""

    def __init__(self):
        super().__init__()
        self.trunk = torch.nn.Linear(9, 16)
        self.head_a = torch.nn.Linear(16, 10)
        self.head_b = torch.nn.Linear(16, 10)

    def forward(self, x):
        h = torch.tanh(self.trunk(x[:, :9]))
        gate = x[:, 9]
        out = torch.zeros(x.shape[0], 10, dtype=h.dtype, device=h.device)
        rows_a = (gate == 0).nonzero().squeeze(1)
        rows_b = (gate != 0).nonzero().squeeze(1)
        if rows_a.numel() > 0:
            out = out.index_copy(0, rows_a, self.head_a(h.index_select(0, rows_a)))
        if rows_b.numel() > 0:
            out = out.index_copy(0, rows_b, self.head_b(h.index_select(0, rows_b)))
        return out


class TinyResNet(torch.nn.Module):
    """scenarios/models/resnet.h's tiny_resnet_shape(): torchvision's ResNet layout (its BasicBlock,
    the same module names) with one block per stage at widths 16, 32, 64, 128. The weights come
    from "init", so only the structure has to match."""

    def __init__(self, num_classes, widths=(16, 32, 64, 128)):
        super().__init__()
        import torchvision  # here, not at the top: the models without it load faster
        nn = torch.nn
        self.conv1 = nn.Conv2d(3, widths[0], 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        inplanes = widths[0]
        for i, (planes, stride) in enumerate(zip(widths, (1, 2, 2, 2))):
            downsample = None
            if stride != 1 or inplanes != planes:
                downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride=stride, bias=False),
                                           nn.BatchNorm2d(planes))
            block = torchvision.models.resnet.BasicBlock(inplanes, planes, stride, downsample)
            setattr(self, f"layer{i + 1}", nn.Sequential(block))
            inplanes = planes
        self.fc = nn.Linear(widths[-1], num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, stride=2, padding=1)
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def bce_one_hot(out, y):
    return F.binary_cross_entropy(torch.sigmoid(out), F.one_hot(y, out.shape[1]).to(out.dtype))


def build_model(meta):
    kind = meta["model"]
    if kind == "linear":
        return torch.nn.Linear(10, 10)
    if kind == "toy_cnn":
        return ToyCNN()
    if kind == "resnet18":
        import torchvision  # here, not at the top: the models without it load faster
        return torchvision.models.resnet18(num_classes=int(meta["num_classes"]))
    if kind == "tiny_resnet":
        return TinyResNet(int(meta["num_classes"]))
    if kind == "gated_cnn":
        return GatedCNN()
    if kind == "gated_heads":
        return GatedHeads()
    if kind == "torchscript":  # ddpbench run --model FILE: the user's scripted model itself
        return torch.jit.load(meta["model_file"])
    raise ValueError(f"unknown model {kind!r}")


def worker(rank, batches_path, out_path, rendezvous, device_kind="cpu", single=False, zero=False,
           zero_state_path=None, fsdp=False):
    torch.set_num_threads(1)
    data = torch.load(batches_path)  # weights-only by default from torch 2.6 on
    meta = data["meta"]
    world = 1 if single else int(meta["world_size"])
    # A file rendezvous in a private folder: a "free" TCP port picked in advance can be taken by
    # another process before rank 0 binds it, and the ranks then wait for each other for torch's
    # default 30 minutes. The timeout bounds any other stall.
    if not single:
        dist.init_process_group("gloo", init_method="file://" + rendezvous, rank=rank,
                                world_size=world, timeout=datetime.timedelta(seconds=300))
    dtype = {"float32": torch.float32, "float64": torch.float64}[meta["dtype"]]
    # --device cuda: rank r on cuda:(r mod count), several ranks per GPU over gloo (NCCL refuses
    # two ranks on one GPU), as ddpbench --share-gpus does.
    device = (torch.device("cuda", rank % torch.cuda.device_count()) if device_kind == "cuda"
              else torch.device("cpu"))
    model = build_model(meta).to(dtype)  # cast first so float64 init values are kept exactly
    model.load_state_dict(data["init"], strict=True)
    model = model.to(device)
    # DDP's arguments as the ddpbench run had them. A run without --bucket-cap-mb leaves it out
    # too: PyTorch 2.x makes the first bucket as large as the rest when bucket_cap_mb is passed.
    options = {"broadcast_buffers": bool(meta["broadcast_buffers"]),
               "find_unused_parameters": bool(meta.get("find_unused_parameters", False)),
               "gradient_as_bucket_view": bool(meta.get("gradient_as_bucket_view", False))}
    if meta.get("bucket_cap_given", True):
        options["bucket_cap_mb"] = float(meta["bucket_cap_mb"])
    if meta.get("static_graph", False):
        options["static_graph"] = True
    dist._DEFAULT_FIRST_BUCKET_BYTES = int(float(meta.get("first_bucket_mb", 1.0)) * 1024 * 1024)
    if fsdp:
        from torch.distributed.fsdp import fully_shard
        shard_group = int(meta.get("shard_group", 0))
        mesh = None
        if 0 < shard_group < world:  # HSDP: dim 0 replicates, dim 1 shards
            from torch.distributed.device_mesh import init_device_mesh
            mesh = init_device_mesh("cpu", (world // shard_group, shard_group),
                                    mesh_dim_names=("replicate", "shard"))
        ddp = fully_shard(model, mesh=mesh, reshard_after_forward=False)
    else:
        ddp = model if single else torch.nn.parallel.DistributedDataParallel(model, **options)
    hook = meta.get("comm_hook", "allreduce")
    if hook != "allreduce" and not single:
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        ddp.register_comm_hook(None, {"fp16": default_hooks.fp16_compress_hook,
                                      "bf16": default_hooks.bf16_compress_hook}[hook])
    if meta.get("optimizer", "sgd") == "adam":
        opt_class = torch.optim.Adam
        opt_args = {"lr": float(meta["lr"]), "betas": tuple(float(b) for b in meta["betas"]),
                    "eps": float(meta["eps"]), "weight_decay": float(meta["weight_decay"])}
    else:
        opt_class = torch.optim.SGD
        opt_args = {"lr": float(meta["lr"]), "momentum": float(meta["momentum"]),
                    "dampening": float(meta["dampening"]),
                    "weight_decay": float(meta["weight_decay"]),
                    "nesterov": bool(meta["nesterov"])}
    if zero:
        from torch.distributed.optim import ZeroRedundancyOptimizer
        opt = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=opt_class, **opt_args)
    else:
        opt = opt_class(ddp.parameters(), **opt_args)
    clip = float(meta.get("clip_grad_norm", 0.0))
    amp = meta.get("amp", "off")
    autocast_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(amp)
    scaler = None
    if amp == "fp16":
        options = {"init_scale": float(meta["grad_scaler_init"]),
                   "growth_interval": int(meta["growth_interval"])}
        # torch.amp.GradScaler takes the device from 2.3 on; 1.13 has only CUDA's.
        scaler = (torch.amp.GradScaler(device.type, **options) if hasattr(torch.amp, "GradScaler")
                  else torch.cuda.amp.GradScaler(**options))
    scales, skipped = [], []
    loss_fn = {"mse": F.mse_loss, "rmse": lambda out, y: F.mse_loss(out, y).sqrt(),
               "cross_entropy": F.cross_entropy, "bce_one_hot": bce_one_hot}[meta["loss"]]
    steps = int(meta["steps"])
    if len(data["inputs"]) < steps or len(data["targets"]) < steps:
        raise ValueError(f"meta.steps={steps} but {len(data['inputs'])} inputs / "
                         f"{len(data['targets'])} targets")
    accumulation = int(meta.get("accumulation_steps", 1))
    no_sync = bool(meta.get("no_sync", True))
    # Uneven rank batches (ddpbench's plan, exported as "chunk_sizes"): rank r's local batch of
    # step s is row block r of the global batch split by chunk_sizes[s]; a rank whose block is
    # empty has run out of the epoch's batches and waits in PyTorch's Join, which wraps each
    # epoch's loop as its documentation shows (DDP, and ZeroRedundancyOptimizer under --zero).
    sizes = None if single else data.get("chunk_sizes")
    epochs = data.get("epochs")

    def local_batch(s):
        x, y = data["inputs"][s], data["targets"][s]
        if sizes is not None:
            rows = [int(n) for n in sizes[s]]
            if sum(rows) != x.shape[0] or y.shape[0] != x.shape[0]:
                raise ValueError(f"step {s}: chunk_sizes {rows} do not add up to the global "
                                 f"batch {x.shape[0]} (targets {y.shape[0]})")
            return x.split(rows)[rank], y.split(rows)[rank]
        parts = world * (1 if single else accumulation)
        if x.shape[0] % parts or y.shape[0] != x.shape[0]:
            raise ValueError(f"step {s}: global batch {x.shape[0]} (targets {y.shape[0]}) "
                             f"not divisible into {parts} equal parts")
        return x.chunk(world)[rank], y.chunk(world)[rank]

    def train_step(s, x, y):  # this rank's step s on its local batch; its loss, detached
        x = x.to(device, dtype) if x.is_floating_point() else x.to(device)  # token ids stay int64
        y = y.to(device)
        if y.is_floating_point():
            y = y.to(dtype)
        opt.zero_grad()
        if "forward_seeds" in data:  # the draws ddpbench's rank made (dropout): the same masks
            torch.manual_seed(int(data["forward_seeds"][s][rank]))
        if scaler is not None:
            scales.append(scaler.get_scale())
        # Gradient accumulation as PyTorch's recipe writes it: micro-batches of the local batch,
        # each loss / A, DDP's allreduce only on the last (no_sync). ddpbench's single mode trains
        # the whole global batch at once, so --single never accumulates.
        micro = 1 if single else accumulation
        loss = None
        for m, (xm, ym) in enumerate(zip(x.chunk(micro), y.chunk(micro))):
            quiet = not single and no_sync and m < micro - 1
            if fsdp:  # FSDP2's no_sync: gradients stay unsharded and accumulate
                ddp.set_requires_gradient_sync(not quiet)
            with ddp.no_sync() if quiet and not fsdp else contextlib.nullcontext():
                with torch.autocast(device.type, dtype=autocast_dtype or torch.bfloat16,
                                    enabled=autocast_dtype is not None):
                    micro_loss = loss_fn(ddp(xm), ym)
                if micro > 1:
                    micro_loss = micro_loss / micro
                (scaler.scale(micro_loss) if scaler is not None else micro_loss).backward()
            loss = micro_loss.detach() if loss is None else loss + micro_loss.detach()
        if scaler is not None:
            scaler.unscale_(opt)
        if clip > 0:
            torch.nn.utils.clip_grad_norm_(ddp.parameters(), clip)
        if scaler is not None:
            scaler.step(opt)
            scaler.update()
            if scaler.get_scale() < scales[-1]:  # backed off: this step found an inf and skipped
                skipped.append(s)
        else:
            opt.step()
        return loss.detach().clone()

    losses = []
    if sizes is None:
        for s in range(steps):
            total = train_step(s, *local_batch(s))
            if not single:
                dist.all_reduce(total)  # SUM
            losses.append(total.item() / world)
    else:
        from torch.distributed.algorithms.join import Join
        # A joined rank cannot join a per-step allreduce: each rank keeps its loss x rows and
        # rows per step, summed over the ranks at the end (DDP's sample-weighted mean).
        weighted = torch.zeros(steps, dtype=torch.float64)
        rows = torch.zeros(steps, dtype=torch.float64)
        for e in sorted(set(int(v) for v in epochs[:steps])):
            with Join([ddp] + ([opt] if zero else [])):
                for s in range(steps):
                    n = int(sizes[s][rank])
                    if int(epochs[s]) != e or n == 0:
                        continue
                    weighted[s] = train_step(s, *local_batch(s)).double().item() * n
                    rows[s] = n
        dist.all_reduce(weighted)
        dist.all_reduce(rows)
        losses = (weighted / rows).tolist()
    if scaler is not None and not single:  # every rank's scaler must have seen the same steps
        mine = torch.tensor(scales + [float(len(skipped))], dtype=torch.float64)
        rank0 = mine.clone()
        dist.broadcast(rank0, 0)
        if not torch.equal(mine, rank0):
            raise RuntimeError(f"rank {rank}'s GradScaler scales {scales} differ from rank 0's")
    if zero and zero_state_path:
        opt.consolidate_state_dict(to=0)  # collective
        if rank == 0:
            torch.save(opt.state_dict(), zero_state_path)
    state = model.state_dict()
    if fsdp:  # DTensor shards: gathered whole (collective)
        state = {k: v.full_tensor() if hasattr(v, "full_tensor") else v for k, v in state.items()}
    if rank == 0:
        state = {k: v.detach().cpu().clone() for k, v in state.items()}
        torch.save({"state": state, "losses": torch.tensor(losses, dtype=torch.float64),
                    "scales": scales, "skipped": skipped,
                    "torch_version": str(torch.__version__)}, out_path)
    if single:
        return
    dist.barrier()
    # Teardown order matters (torch 2.x): the DDP wrapper's C++ Reducer holds the process group and
    # is destroyed with the GIL held. Were it the last owner, ProcessGroupGloo's destructor would
    # join its worker thread under the GIL while that thread waits for the GIL to free a finished
    # collective's tensors: a deadlock (measured: 5 of 40 runs hung). Freed first, the wrapper only
    # drops a reference, and destroy_process_group ends the group through torch's GIL-releasing
    # holder.
    del opt, ddp
    gc.collect()
    dist.destroy_process_group()


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
