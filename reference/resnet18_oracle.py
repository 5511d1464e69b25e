#!/usr/bin/env python3
"""resnet18_oracle.py — torchvision's resnet18(num_classes=10) as the oracle for ddpbench's ResNet-18.

Writes OUT (a torch.save file that libtorch's torch::pickle_load reads) holding a dict:
  "init.<name>"   every state_dict tensor right after construction under torch.manual_seed(SEED)
  "input"         a [4, 3, 32, 32] input, "target" its int64 labels
  "logits"        model(input) in train mode (batch statistics), "loss" CrossEntropy of it
  "grad.<name>"   every parameter's gradient of that loss
  "after.<name>"  every buffer after that forward (BatchNorm running stats moved)

The C++ test loads "init.*" into its own ResNet-18, feeds "input" and compares logits, loss,
gradients and buffers; it also checks that its own init under the same seed equals "init.*".
"""
import argparse

import torch
import torchvision


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    model = torchvision.models.resnet18(num_classes=10)
    out = {f"init.{k}": v.detach().clone() for k, v in model.state_dict().items()}
    gen = torch.Generator().manual_seed(args.seed + 1)
    x = torch.randn(4, 3, 32, 32, generator=gen)
    target = torch.randint(0, 10, (4,), generator=gen)
    model.train()
    logits = model(x)
    loss = torch.nn.functional.cross_entropy(logits, target)
    loss.backward()
    out["input"] = x
    out["target"] = target
    out["logits"] = logits.detach()
    out["loss"] = loss.detach()
    for name, p in model.named_parameters():
        out[f"grad.{name}"] = p.grad.detach().clone()
    for k, v in model.named_buffers():
        out[f"after.{k}"] = v.detach().clone()
    torch.save(out, args.out)


if __name__ == "__main__":
    main()
