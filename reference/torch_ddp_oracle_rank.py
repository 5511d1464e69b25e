"""torch_ddp_oracle_rank.py — one rank of torch_ddp_oracle.py's training run (the one device under
--single): the exported model wrapped as the run had it (DistributedDataParallel,
ZeroRedundancyOptimizer or FSDP2's fully_shard, or the plain model), trained on this rank's part
of each exported global batch as PyTorch's recipes write a step; rank 0 saves the result. The
batches file and what each step does are described in torch_ddp_oracle.py."""
import contextlib
import datetime
import gc
import math

import torch
import torch.distributed as dist
import torch.nn.functional as F

from torch_ddp_oracle_models import build_model


def bce_one_hot(out, y):
    return F.binary_cross_entropy(torch.sigmoid(out), F.one_hot(y, out.shape[1]).to(out.dtype))


def join_process_group(rendezvous, rank, world):
    # A file rendezvous in a private folder: a "free" TCP port picked in advance can be taken by
    # another process before rank 0 binds it, and the ranks then wait for each other for torch's
    # default 30 minutes. The timeout bounds any other stall.
    dist.init_process_group("gloo", init_method="file://" + rendezvous, rank=rank,
                            world_size=world, timeout=datetime.timedelta(seconds=300))


def rank_device(device_kind, rank):
    # --device cuda: rank r on cuda:(r mod count), several ranks per GPU over gloo (NCCL refuses
    # two ranks on one GPU), as ddpbench --share-gpus does.
    return (torch.device("cuda", rank % torch.cuda.device_count()) if device_kind == "cuda"
            else torch.device("cpu"))


def initial_model(meta, init, dtype, device):
    """The exported model in the run dtype, holding the run's initial state, on `device`."""
    model = build_model(meta).to(dtype)  # cast first so float64 init values are kept exactly
    model.load_state_dict(init, strict=True)
    model = model.to(device)
    if meta.get("channels_last", False):  # MODEL.CHANNELS_LAST: every 4-D parameter and buffer
        model = model.to(memory_format=torch.channels_last)
    return model


def wrap_model(model, meta, world, single, fsdp):
    """The model as the run trained it: sharded by FSDP2 (--fsdp), wrapped in DDP with the run's
    arguments and comm hook, or the plain model (--single)."""
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
    return ddp


def parameter_groups(model, meta):
    """nanoGPT's configure_optimizers: the parameters a "no_decay" rule matches ("1d": fewer
    than 2 dimensions; else a substring of the name) in a second group with weight decay 0;
    without rules, every parameter in one group. An empty group is left out, as ddpbench does."""
    rules = [str(r) for r in meta.get("no_decay", [])]
    if not rules:
        return list(model.parameters())
    def quiet(name, p):
        return any(p.dim() < 2 if r == "1d" else r in name for r in rules)
    named = list(model.named_parameters())
    decayed = [p for n, p in named if not quiet(n, p)]
    undecayed = [p for n, p in named if quiet(n, p)]
    groups = []
    if decayed or not undecayed:
        groups.append({"params": decayed})
    if undecayed:
        # Its own share of the rate (OPTIM.NO_DECAY_LR_SCALE), as its own lr: torch's schedulers
        # run each group's initial lr; get_lr's rate is multiplied by it (Schedule).
        scale = float(meta.get("no_decay_lr_scale", 1.0))
        groups.append({"params": undecayed, "weight_decay": 0.0, "lr_scale": scale,
                       "lr": float(meta["lr"]) * scale})
    return groups


def scheduled_lr(meta, step):
    """The rate of optimizer step `step`, written as the recipes write it: nanoGPT's get_lr(it)
    for warmup_cosine. StepLR is torch's own scheduler (StepLR.attach)."""
    base = float(meta["lr"])
    if meta.get("schedule", "constant") != "warmup_cosine":
        return base
    warmup, decay = int(meta["warmup_steps"]), int(meta["decay_steps"])
    min_lr = float(meta["min_lr"])
    if step < warmup:
        return base * (step + 1) / (warmup + 1)
    if step > decay:
        return min_lr
    decay_ratio = (step - warmup) / (decay - warmup)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (base - min_lr)


class Schedule:
    """Sets each group's rate before optimizer step s: torch.optim.lr_scheduler.StepLR or
    OneCycleLR stepped after each optimizer step for "step" and "onecycle", g['lr'] = get_lr(s)
    for "warmup_cosine" (nanoGPT)."""

    def __init__(self, opt, meta):
        self.opt, self.meta = opt, meta
        self.kind = meta.get("schedule", "constant")
        self.torch_scheduler = None
        if self.kind == "step":
            self.torch_scheduler = torch.optim.lr_scheduler.StepLR(
                opt, step_size=int(meta["step_size"]), gamma=float(meta["gamma"]))
        if self.kind == "onecycle":  # its defaults: cos, momentum cycled 0.95 -> 0.85 -> 0.95
            self.torch_scheduler = torch.optim.lr_scheduler.OneCycleLR(
                opt, max_lr=[float(meta["lr"]) * g.get("lr_scale", 1.0) for g in opt.param_groups],
                total_steps=int(meta["total_steps"]),
                pct_start=float(meta["pct_start"]))

    def before_step(self, s):
        if self.kind == "warmup_cosine":
            for g in self.opt.param_groups:
                g["lr"] = scheduled_lr(self.meta, s) * g.get("lr_scale", 1.0)

    def after_step(self):
        if self.torch_scheduler is not None:
            self.torch_scheduler.step()


def make_optimizer(model, ddp, meta, zero):
    """SGD, Adam or AdamW with the run's settings and parameter groups (of the unwrapped model's
    names), created after wrapping; under --zero inside ZeroRedundancyOptimizer."""
    kind = meta.get("optimizer", "sgd")
    if kind in ("adam", "adamw"):
        opt_class = torch.optim.Adam if kind == "adam" else torch.optim.AdamW
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
        return ZeroRedundancyOptimizer(parameter_groups(model, meta), optimizer_class=opt_class,
                                       **opt_args)
    return opt_class(parameter_groups(model, meta), **opt_args)


def grad_scaler(meta, device):
    """fp16's GradScaler as the run configured it; None without one (bf16, no autocast)."""
    if meta.get("amp", "off") != "fp16":
        return None
    options = {"init_scale": float(meta["grad_scaler_init"]),
               "growth_interval": int(meta["growth_interval"])}
    # torch.amp.GradScaler takes the device from 2.3 on; 1.13 has only CUDA's.
    return (torch.amp.GradScaler(device.type, **options) if hasattr(torch.amp, "GradScaler")
            else torch.cuda.amp.GradScaler(**options))


class RankTraining:
    """This rank's steps: its part of each global batch, each step as PyTorch's recipes write it
    (accumulation, autocast, GradScaler, clipping), and what its GradScaler did."""

    def __init__(self, data, rank, world, ddp, opt, device, dtype, *, single, zero, fsdp):
        meta = data["meta"]
        self.data, self.rank, self.world = data, rank, world
        self.single, self.zero, self.fsdp = single, zero, fsdp
        self.ddp, self.opt, self.device, self.dtype = ddp, opt, device, dtype
        self.clip = float(meta.get("clip_grad_norm", 0.0))
        self.channels_last = bool(meta.get("channels_last", False))
        self.autocast_dtype = {"bf16": torch.bfloat16,
                               "fp16": torch.float16}.get(meta.get("amp", "off"))
        self.scaler = grad_scaler(meta, device)
        self.schedule = Schedule(opt, meta)
        self.scales, self.skipped = [], []
        smoothing = float(meta.get("label_smoothing", 0.0))
        cross_entropy = (F.cross_entropy if smoothing == 0 else
                         lambda out, y: F.cross_entropy(out, y, label_smoothing=smoothing))
        self.loss_fn = {"mse": F.mse_loss, "rmse": lambda out, y: F.mse_loss(out, y).sqrt(),
                        "cross_entropy": cross_entropy, "bce_one_hot": bce_one_hot}[meta["loss"]]
        self.steps = int(meta["steps"])
        if len(data["inputs"]) < self.steps or len(data["targets"]) < self.steps:
            raise ValueError(f"meta.steps={self.steps} but {len(data['inputs'])} inputs / "
                             f"{len(data['targets'])} targets")
        self.accumulation = int(meta.get("accumulation_steps", 1))
        self.no_sync = bool(meta.get("no_sync", True))
        # Uneven rank batches (ddpbench's plan, exported as "chunk_sizes"): rank r's local batch of
        # step s is row block r of the global batch split by chunk_sizes[s]; a rank whose block is
        # empty has run out of the epoch's batches and waits in PyTorch's Join, which wraps each
        # epoch's loop as its documentation shows (DDP, and ZeroRedundancyOptimizer under --zero).
        self.sizes = None if self.single else data.get("chunk_sizes")
        self.epochs = data.get("epochs")

    def local_batch(self, s):
        x, y = self.data["inputs"][s], self.data["targets"][s]
        if self.sizes is not None:
            rows = [int(n) for n in self.sizes[s]]
            if sum(rows) != x.shape[0] or y.shape[0] != x.shape[0]:
                raise ValueError(f"step {s}: chunk_sizes {rows} do not add up to the global "
                                 f"batch {x.shape[0]} (targets {y.shape[0]})")
            return x.split(rows)[self.rank], y.split(rows)[self.rank]
        parts = self.world * (1 if self.single else self.accumulation)
        if x.shape[0] % parts or y.shape[0] != x.shape[0]:
            raise ValueError(f"step {s}: global batch {x.shape[0]} (targets {y.shape[0]}) "
                             f"not divisible into {parts} equal parts")
        return x.chunk(self.world)[self.rank], y.chunk(self.world)[self.rank]

    def train_step(self, s, x, y):  # this rank's step s on its local batch; its loss, detached
        device, dtype, scaler = self.device, self.dtype, self.scaler
        x = x.to(device, dtype) if x.is_floating_point() else x.to(device)  # token ids stay int64
        if self.channels_last and x.dim() == 4:
            x = x.contiguous(memory_format=torch.channels_last)
        y = y.to(device)
        if y.is_floating_point():
            y = y.to(dtype)
        self.opt.zero_grad()
        if "forward_seeds" in self.data:  # the draws ddpbench's rank made (dropout): the same masks
            torch.manual_seed(int(self.data["forward_seeds"][s][self.rank]))
        if scaler is not None:
            self.scales.append(scaler.get_scale())
        loss = self.forward_backward(x, y)
        if scaler is not None:
            scaler.unscale_(self.opt)
        if self.clip > 0:
            torch.nn.utils.clip_grad_norm_(self.ddp.parameters(), self.clip)
        self.schedule.before_step(s)
        if scaler is not None:
            scaler.step(self.opt)
            scaler.update()
            if scaler.get_scale() < self.scales[-1]:  # backed off: found an inf, skipped the step
                self.skipped.append(s)
        else:
            self.opt.step()
        self.schedule.after_step()
        return loss.detach().clone()

    def forward_backward(self, x, y):
        # Gradient accumulation as PyTorch's recipe writes it: micro-batches of the local batch,
        # each loss / A, DDP's allreduce only on the last (no_sync). ddpbench's single mode trains
        # the whole global batch at once, so --single never accumulates.
        ddp, scaler = self.ddp, self.scaler
        micro = 1 if self.single else self.accumulation
        loss = None
        for m, (xm, ym) in enumerate(zip(x.chunk(micro), y.chunk(micro))):
            quiet = not self.single and self.no_sync and m < micro - 1
            if self.fsdp:  # FSDP2's no_sync: gradients stay unsharded and accumulate
                ddp.set_requires_gradient_sync(not quiet)
            with ddp.no_sync() if quiet and not self.fsdp else contextlib.nullcontext():
                with torch.autocast(self.device.type, dtype=self.autocast_dtype or torch.bfloat16,
                                    enabled=self.autocast_dtype is not None):
                    micro_loss = self.loss_fn(ddp(xm), ym)
                if micro > 1:
                    micro_loss = micro_loss / micro
                (scaler.scale(micro_loss) if scaler is not None else micro_loss).backward()
            loss = micro_loss.detach() if loss is None else loss + micro_loss.detach()
        return loss

    def train(self):
        """Every step's loss over the whole global batch."""
        if self.sizes is None:
            losses = []
            for s in range(self.steps):
                total = self.train_step(s, *self.local_batch(s))
                if not self.single:
                    dist.all_reduce(total)  # SUM
                losses.append(total.item() / self.world)
            return losses
        return self.train_joined()

    def train_joined(self):
        """Uneven rank batches: each epoch's loop inside PyTorch's Join."""
        from torch.distributed.algorithms.join import Join
        # A joined rank cannot join a per-step allreduce: each rank keeps its loss x rows and
        # rows per step, summed over the ranks at the end (DDP's sample-weighted mean).
        steps = self.steps
        weighted = torch.zeros(steps, dtype=torch.float64)
        rows = torch.zeros(steps, dtype=torch.float64)
        for e in sorted(set(int(v) for v in self.epochs[:steps])):
            with Join([self.ddp] + ([self.opt] if self.zero else [])):
                for s in range(steps):
                    n = int(self.sizes[s][self.rank])
                    if int(self.epochs[s]) != e or n == 0:
                        continue
                    weighted[s] = self.train_step(s, *self.local_batch(s)).double().item() * n
                    rows[s] = n
        dist.all_reduce(weighted)
        dist.all_reduce(rows)
        return (weighted / rows).tolist()

    def require_rank0s_scales(self):
        """Every rank's scaler must have seen the same steps."""
        if self.scaler is None or self.single:
            return
        mine = torch.tensor(self.scales + [float(len(self.skipped))], dtype=torch.float64)
        rank0 = mine.clone()
        dist.broadcast(rank0, 0)
        if not torch.equal(mine, rank0):
            raise RuntimeError(f"rank {self.rank}'s GradScaler scales {self.scales} differ from "
                               f"rank 0's")


def save_result(model, rank, fsdp, losses, training, out_path):
    """Rank 0 saves its final state and every step's loss (the state is gathered whole first under
    --fsdp, a collective of every rank)."""
    state = model.state_dict()
    if fsdp:  # DTensor shards: gathered whole (collective)
        state = {k: v.full_tensor() if hasattr(v, "full_tensor") else v for k, v in state.items()}
    if rank == 0:
        state = {k: v.detach().cpu().clone() for k, v in state.items()}
        torch.save({"state": state, "losses": torch.tensor(losses, dtype=torch.float64),
                    "scales": training.scales, "skipped": training.skipped,
                    "torch_version": str(torch.__version__)}, out_path)


def worker(rank, batches_path, out_path, rendezvous, device_kind="cpu", single=False, zero=False,
           zero_state_path=None, fsdp=False):
    torch.set_num_threads(1)
    data = torch.load(batches_path)  # weights-only by default from torch 2.6 on
    meta = data["meta"]
    world = 1 if single else int(meta["world_size"])
    if not single:
        join_process_group(rendezvous, rank, world)
    dtype = {"float32": torch.float32, "float64": torch.float64}[meta["dtype"]]
    device = rank_device(device_kind, rank)
    model = initial_model(meta, data["init"], dtype, device)
    ddp = wrap_model(model, meta, world, single, fsdp)
    opt = make_optimizer(model, ddp, meta, zero)
    training = RankTraining(data, rank, world, ddp, opt, device, dtype, single=single, zero=zero,
                            fsdp=fsdp)
    losses = training.train()
    training.require_rank0s_scales()
    if zero and zero_state_path:
        opt.consolidate_state_dict(to=0)  # collective
        if rank == 0:
            torch.save(opt.state_dict(), zero_state_path)
    save_result(model, rank, fsdp, losses, training, out_path)
    if single:
        return
    dist.barrier()
    # Teardown order matters (torch 2.x): the DDP wrapper's C++ Reducer holds the process group and
    # is destroyed with the GIL held. Were it the last owner, ProcessGroupGloo's destructor would
    # join its worker thread under the GIL while that thread waits for the GIL to free a finished
    # collective's tensors: a deadlock (measured: 5 of 40 runs hung). Freed first, the wrapper only
    # drops a reference, and destroy_process_group ends the group through torch's GIL-releasing
    # holder. `training` holds the wrapper and the optimizer too.
    del training, opt, ddp
    gc.collect()
    dist.destroy_process_group()
