#!/usr/bin/env python3
"""checkpoint_oracle.py — a ddpbench checkpoint as a PyTorch training script would use it.

  --checkpoint FILE   a file of `ddpbench run --checkpoint-every N` (a plain torch.load)
  --model resnet18    loads ckpt["model"] into torchvision.models.resnet18(num_classes=10) with
                      strict=True (keys bare, or under "module." as a DDP-wrapped model names them:
                      then into a wrapper whose attribute `module` is the model)
  --logits FILE       a torch.load dict {"input": x, "logits": y}: the logits ddpbench's own model
                      computed in eval mode from the checkpoint's state; the loaded torchvision
                      model must compute the same (torch.testing.assert_close's float32 defaults)
  --doctor OUT        instead: writes the checkpoint to OUT with the optimizer state emptied (as
                      if saved before the first step), for tests that a resume really uses it

The optimizer part must load into torch.optim.SGD with the checkpoint's own param group
(`optimizer.load_state_dict`), and its momentum buffers must be the file's. Prints OK, or FAIL and
the reason (exit 1).
"""
import argparse
import sys

import torch
import torchvision


def fail(why):
    print(f"FAIL: {why}")
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--model", choices=["resnet18"])
    ap.add_argument("--logits")
    ap.add_argument("--doctor")
    args = ap.parse_args()
    torch.set_num_threads(1)
    # A user's plain torch.load(path): weights-only by default since PyTorch 2.6. (1.13's
    # weights-only unpickler lacks the float opcode, so an optimizer's lr cannot pass it there, as
    # for a state_dict PyTorch itself saved; 1.13's default reads it.)
    ckpt = torch.load(args.checkpoint)
    if args.doctor:
        ckpt["optimizer"]["state"] = {}
        # ddpbench reads no param group; libtorch 1.13's unpickler lacks the APPEND opcode that
        # Python writes for a one-element list, so the list goes rather than the file failing.
        ckpt["optimizer"]["param_groups"] = []
        torch.save(ckpt, args.doctor)
        print("OK: doctored")
        return
    for key in ("model", "optimizer", "epoch", "step", "ddpbench"):
        if key not in ckpt:
            fail(f"no {key!r} in the checkpoint")
    print(f"step {ckpt['step']} epoch {ckpt['epoch']} {ckpt['ddpbench']}")
    if args.model != "resnet18":
        print("OK")
        return
    model = torchvision.models.resnet18(num_classes=10)
    state = ckpt["model"]
    prefixed = all(k.startswith("module.") for k in state)
    holder = model
    if prefixed:
        holder = torch.nn.Module()
        holder.module = model
    holder.load_state_dict(state, strict=True)  # raises on any missing or unexpected key
    group = {k: v for k, v in ckpt["optimizer"]["param_groups"][0].items() if k != "params"}
    sgd = torch.optim.SGD(model.parameters(), **{k: group[k] for k in
                                                 ("lr", "momentum", "dampening", "weight_decay",
                                                  "nesterov")})
    sgd.load_state_dict(ckpt["optimizer"])
    saved = ckpt["optimizer"]["state"]
    for i, p in enumerate(model.parameters()):
        if saved and not torch.equal(sgd.state[p]["momentum_buffer"], saved[i]["momentum_buffer"]):
            fail(f"momentum buffer of parameter {i} did not load")
    print(f"loaded strict=True ({'module.' if prefixed else 'bare'} keys), "
          f"{len(saved)} momentum buffers")
    if args.logits:
        ref = torch.load(args.logits)
        model.eval()
        with torch.no_grad():
            got = model(ref["input"])
        diff = (got - ref["logits"]).abs().max().item()
        try:
            torch.testing.assert_close(got, ref["logits"])
        except AssertionError as e:
            fail(f"logits differ (max |diff| {diff:.3g}): {str(e).splitlines()[0]}")
        print(f"logits agree (max |diff| {diff:.3g})")
    print("OK")


if __name__ == "__main__":
    main()
