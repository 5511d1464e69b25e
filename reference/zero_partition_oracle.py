#!/usr/bin/env python3
"""zero_partition_oracle.py — PyTorch's ZeroRedundancyOptimizer partition, the oracle for ddpbench's.

Prints one JSON document: {"torch_version": ..., "cases": [{"groups": [[numel, ...], ...],
"world": K, "ranks": [[parameter number, ...] per rank]}, ...]}: which parameters each rank's
local optimizer holds, in its order, parameters numbered across the groups in the optimizer's
order. The grid: K in 1..8 over torchvision's resnet18 (10 classes) in one group and split into
two groups, seeded random counts with many ties in 1..3 groups, and a few hand-made edge cases
(fewer parameters than ranks, all equal, zero-sized). tests/unit/modes_zero_partition_test.cpp
compares every case exactly.

The partition is ZeroRedundancyOptimizer._partition_parameters itself, called on an instance that
skips __init__ (which needs an initialised process group): the method reads only world_size and
param_groups (checked in 1.13 and 2.11).

Run with an interpreter that sees torch: /usr/bin/python3 reference/zero_partition_oracle.py
"""
import json
import random

import torch
from torch.distributed.optim import ZeroRedundancyOptimizer


def pytorch_partition(groups, world):
    params = [[torch.nn.Parameter(torch.empty(n)) for n in numels] for numels in groups]
    number = {}
    for p in (p for group in params for p in group):
        number[id(p)] = len(number)
    zero = ZeroRedundancyOptimizer.__new__(ZeroRedundancyOptimizer)
    zero.world_size = world
    zero.param_groups = [{"params": group} for group in params]
    zero._partition_parameters_cache = []
    per_rank = zero._partition_parameters()
    return [[number[id(p)] for group in rank for p in group["params"]] for rank in per_rank]


def resnet18_numels():
    try:
        import torchvision
    except ImportError:  # an interpreter without torchvision leaves these cases out
        return None
    return [p.numel() for p in torchvision.models.resnet18(num_classes=10).parameters()]


def main():
    rng = random.Random(35)
    grids = []
    resnet = resnet18_numels()
    if resnet is not None:
        grids.append([resnet])
        grids.append([resnet[:30], resnet[30:]])
    for _ in range(40):
        grids.append([[rng.choice([1, 3, 3, 10, 64, 64, 64, 100, 4096]) for _ in
                       range(rng.randint(1, 25))] for _ in range(rng.randint(1, 3))])
    grids += [[[5]], [[2, 2, 2, 2, 2]], [[0, 7, 0, 7]], [[9, 1], [1, 9], [5]], [[]], [[], [4, 4]]]
    cases = []
    for groups in grids:
        for world in range(1, 9):
            cases.append({"groups": groups, "world": world,
                          "ranks": pytorch_partition(groups, world)})
    print(json.dumps({"torch_version": str(torch.__version__), "resnet18": resnet is not None,
                      "cases": cases}))


if __name__ == "__main__":
    main()
