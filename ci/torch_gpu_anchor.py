"""torch_gpu_anchor.py — PyTorch's own step times for cifar_resnet18 on this GPU, the figures
ci/gpu-check.sh sets ddpbench's beside: single device, nn.DataParallel with one replica, and DDP at
world size 1 over NCCL. Same model (torchvision resnet18(num_classes=10), 32x32 inputs), loss and
optimizer (SGD lr 0.02, momentum 0.9, nesterov, weight decay 1e-4) as the scenario, float32, TF32
off, cudnn.benchmark on, as ddpbench's perf phase runs. Each step is timed with CUDA events around
zero_grad + forward + backward + step; the median of the timed steps is printed.

Usage: python3 ci/torch_gpu_anchor.py [batch=256] [timed_steps=60] [warmup=10]
Prints one JSON object per line: {"what": ..., "batch": ..., "step_p50_ms": ..., "samples_per_s": ...}
"""
import json
import os
import statistics
import sys

import torch
import torch.distributed as dist
import torchvision


def median_step_seconds(model, batch, steps, warmup, device):
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9, nesterov=True,
                          weight_decay=1e-4)
    x = torch.randn(batch, 3, 32, 32, device=device)
    y = torch.randint(0, 10, (batch,), device=device)
    times = []
    for i in range(warmup + steps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        opt.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
        end.record()
        torch.cuda.synchronize()
        if i >= warmup:
            times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times)


def report(what, batch, seconds):
    print(json.dumps({"what": what, "batch": batch, "step_p50_ms": round(seconds * 1e3, 3),
                      "samples_per_s": round(batch / seconds, 1)}), flush=True)


def main():
    batch = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 60
    warmup = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    if not torch.cuda.is_available():
        sys.exit("torch_gpu_anchor.py: this torch sees no CUDA device")
    device = torch.device("cuda", 0)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)

    def fresh():
        return torchvision.models.resnet18(num_classes=10).to(device)

    report("single", batch, median_step_seconds(fresh(), batch, steps, warmup, device))
    report("dp1", batch, median_step_seconds(torch.nn.DataParallel(fresh(), device_ids=[0]),
                                             batch, steps, warmup, device))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(29400 + os.getpid() % 1000))
    dist.init_process_group("nccl", rank=0, world_size=1)
    try:
        ddp = torch.nn.parallel.DistributedDataParallel(fresh(), device_ids=[0])
        report("ddp_nccl1", batch, median_step_seconds(ddp, batch, steps, warmup, device))
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
