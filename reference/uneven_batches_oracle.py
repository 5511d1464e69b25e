#!/usr/bin/env python3
"""uneven_batches_oracle.py — what PyTorch's data pipeline gives each DDP rank when the global
batch is not divisible by the world size: the oracle for ddpbench's batch plan (data/batch_plan.h).

Rank r of K gets local batch size len(torch.arange(B).tensor_split(K)[r]) (20 over 3 = 7, 7, 6), a
DistributedSampler(num_replicas=K, rank=r, shuffle, seed, drop_last) with set_epoch(e), and a
DataLoader(batch_size=that, drop_last=False) over it. Prints one JSON document:
{"torch_version": ..., "cases": [{N, K, B, shuffle, drop_last, seed, "local_batches": [...],
"epochs": [[[batch, ...] per rank] per epoch]}]}. tests/unit/data_batch_plan_test.cpp compares
every batch exactly.

Run with the Debian interpreter that sees python3-torch:
/usr/bin/python3 reference/uneven_batches_oracle.py
"""
import json
import sys

import torch
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler


class _Indices(torch.utils.data.Dataset):
    """Sample i is the index i, so a batch is the list of indices it holds."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i


def case(n, k, b, shuffle, drop_last, seed, epochs):
    sizes = [len(t) for t in torch.arange(b).tensor_split(k)]
    per_epoch = []
    for epoch in range(epochs):
        ranks = []
        for rank in range(k):
            sampler = DistributedSampler(_Indices(n), num_replicas=k, rank=rank, shuffle=shuffle,
                                         seed=seed, drop_last=drop_last)
            sampler.set_epoch(epoch)
            loader = DataLoader(_Indices(n), batch_size=sizes[rank], sampler=sampler)
            ranks.append([[int(i) for i in batch] for batch in loader])
        per_epoch.append(ranks)
    return {"N": n, "K": k, "B": b, "shuffle": shuffle, "drop_last": drop_last, "seed": seed,
            "local_batches": sizes, "epochs": per_epoch}


def main():
    cases = []
    for n, k, b in ((100, 3, 20), (10, 3, 4), (50, 4, 10), (37, 5, 13), (103, 8, 9), (7, 3, 5),
                    (64, 8, 64), (20, 3, 20)):
        for drop_last in (False, True):
            for shuffle, seed in ((False, 0), (True, 0), (True, 11)):
                cases.append(case(n, k, b, shuffle, drop_last, seed, 3))
    json.dump({"torch_version": torch.__version__, "cases": cases}, fp=sys.stdout)


if __name__ == "__main__":
    main()
