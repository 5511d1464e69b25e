"""grad_scaler_expected.py — what PyTorch's torch.amp.GradScaler does on the CPU over a fixed
sequence of gradients, for the C++ GradScaler to reproduce bit for bit
(tests/unit/scenarios_amp_test.cpp). Needs PyTorch 2.x (1.13 has no CPU kernels for the ops).

    python3 tests/support/grad_scaler_expected.py OUT.pt

OUT.pt is a dict: "steps"; per step i, "grad<i>.<j>" (two float32 gradients as set before
unscale_, some holding inf or NaN), "unscaled<i>.<j>" (after unscale_), "skipped<i>" (whether
step() skipped the optimizer), "scale<i>" and "tracker<i>" (after update()). The scaler starts at
2^16 with growth_interval 3, so the run backs off and grows.
"""
import sys

import torch


def main():
    torch.manual_seed(0)
    params = [torch.nn.Parameter(torch.zeros(5)), torch.nn.Parameter(torch.zeros(2, 3))]
    optimizer = torch.optim.SGD(params, lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16, growth_interval=3)
    # Steps 2 and 6 hold an inf, step 7 a NaN; the rest are clean (scale x 2 after 3 in a row).
    bad = {2: float("inf"), 6: float("-inf"), 7: float("nan")}
    scaler.scale(torch.ones(()))  # the scale and tracker are made on first use
    out = {"steps": 10}
    for i in range(out["steps"]):
        grads = [torch.randn(5) * 3e4, torch.randn(2, 3) * 7.0]
        if i in bad:
            grads[i % 2].view(-1)[1] = bad[i]
        for j, (p, g) in enumerate(zip(params, grads)):
            out[f"grad{i}.{j}"] = g.clone()
            p.grad = g.clone()
        before = [p.detach().clone() for p in params]
        scaler.unscale_(optimizer)
        for j, p in enumerate(params):
            out[f"unscaled{i}.{j}"] = p.grad.clone()
        scaler.step(optimizer)
        out[f"skipped{i}"] = all(torch.equal(b, p) for b, p in zip(before, params))
        scaler.update()
        out[f"scale{i}"] = torch.tensor(scaler.get_scale())
        out[f"tracker{i}"] = scaler._growth_tracker.clone()
    torch.save(out, sys.argv[1])


if __name__ == "__main__":
    main()
