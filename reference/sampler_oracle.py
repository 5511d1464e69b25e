#!/usr/bin/env python3
"""sampler_oracle.py — real PyTorch DistributedSampler partitions, the oracle for ddpbench's port.

Prints one JSON document: {"torch_version": ..., "cases": [{N, K, shuffle, drop_last, seed, epoch,
"num_samples", "total_size", "ranks": [[...], ...]}, ...]} over a grid that covers N in 1..103,
K in 1..8, drop_last and shuffle both ways, several seeds and epochs, and padding longer than the
dataset (N < K - 1). tests/unit/data_sampler_oracle_test.cpp compares every case exactly.

Run with the Debian interpreter that sees python3-torch: /usr/bin/python3 reference/sampler_oracle.py
"""
import argparse
import json
import sys

import torch
from torch.utils.data.distributed import DistributedSampler


class _Sized:
    """DistributedSampler only needs len(dataset)."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n


def partitions(n, k, shuffle, drop_last, seed, epoch):
    ranks = []
    sampler = None
    for rank in range(k):
        sampler = DistributedSampler(_Sized(n), num_replicas=k, rank=rank, shuffle=shuffle,
                                     seed=seed, drop_last=drop_last)
        sampler.set_epoch(epoch)
        ranks.append([int(i) for i in sampler])
    return {"N": n, "K": k, "shuffle": shuffle, "drop_last": drop_last, "seed": seed,
            "epoch": epoch, "num_samples": sampler.num_samples, "total_size": sampler.total_size,
            "ranks": ranks}


def grid(max_n, max_k):
    for n in range(1, max_n + 1):
        for k in range(1, max_k + 1):
            for drop_last in (False, True):
                yield n, k, False, drop_last, 0, 0
                for seed, epoch in ((0, 0), (0, 3), (7, 1), (12345, 0)):
                    yield n, k, True, drop_last, seed, epoch


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-n", type=int, default=103)
    ap.add_argument("--max-k", type=int, default=8)
    args = ap.parse_args()
    cases = [partitions(*c) for c in grid(args.max_n, args.max_k)]
    json.dump({"torch_version": torch.__version__, "cases": cases}, sys.stdout,
              separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
