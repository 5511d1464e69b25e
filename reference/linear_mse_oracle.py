#!/usr/bin/env python3
"""linear_mse_oracle.py — the seed notebook's single-device recipe in real PyTorch, used to judge
ddpbench's `linear_mse` scenario.

    torch.manual_seed(123); x = randn(20, 10); y = randn(20, 10); model = Linear(10, 10)
    MSELoss, SGD(lr=1), `--steps` full-batch steps (the notebook does 1)

With --check STATE (a state_single.pt written by `ddpbench run --scenario linear_mse`), loads it
with torch.load, compares every tensor with PyTorch's result and exits 1 on any difference above
--atol (default 0: float32 on one CPU thread is expected to match bit for bit), printing the worst
tensor. Without --check, prints the final weights and losses as JSON.
"""
import argparse
import json
import sys

import torch


def train(steps, seed, dtype):
    torch.manual_seed(seed)
    x = torch.randn(20, 10)
    y = torch.randn(20, 10)
    model = torch.nn.Linear(10, 10)
    model.to(dtype)
    x, y = x.to(dtype), y.to(dtype)
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return model.state_dict(), losses


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1)
    ap.add_argument("--seed", type=int, default=123)
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    ap.add_argument("--check", metavar="STATE", help="state_single.pt to compare")
    ap.add_argument("--atol", type=float, default=0.0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    dtype = torch.float64 if args.dtype == "float64" else torch.float32
    ref, losses = train(args.steps, args.seed, dtype)
    if not args.check:
        json.dump({"losses": losses, "state": {k: v.tolist() for k, v in ref.items()}}, sys.stdout)
        sys.stdout.write("\n")
        return 0
    # weights_only: ddpbench's files must load the way torch.load loads by default since 2.6.
    got = torch.load(args.check, weights_only=True)
    if sorted(got.keys()) != sorted(ref.keys()):
        print(f"FAIL: tensor names differ: ddpbench {sorted(got)} vs PyTorch {sorted(ref)}")
        return 1
    worst_name, worst = None, -1.0
    for name, want in ref.items():
        if got[name].dtype != want.dtype or got[name].shape != want.shape:
            print(f"FAIL: {name}: {got[name].dtype}{list(got[name].shape)} vs "
                  f"{want.dtype}{list(want.shape)}")
            return 1
        diff = (got[name] - want).abs().max().item()
        if diff > worst:
            worst_name, worst = name, diff
    status = "OK" if worst <= args.atol else "FAIL"
    print(f"{status}: max |ddpbench - pytorch| = {worst:.3e} (tensor {worst_name}, atol {args.atol})")
    return 0 if status == "OK" else 1


if __name__ == "__main__":
    sys.exit(main())
