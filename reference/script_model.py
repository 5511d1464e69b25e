"""script_model.py — makes the TorchScript file ddpbench trains (`ddpbench run --model FILE.pt`)
from a PyTorch nn.Module: torch.jit.script first, torch.jit.trace only when scripting fails.

    python3 reference/script_model.py MODULE:FACTORY OUT.pt [--kwargs k=v ...] [--seed 0]
                                      [--trace --input-shape 3,32,32 [--input-dtype int64]]

MODULE:FACTORY names a callable that returns the model, e.g. `torchvision.models:resnet18` with
`--kwargs num_classes=10`, or `mypkg.nets:build`. The file is saved in train() mode, unfrozen, with
every parameter that requires grad, which is what training needs. From Python code, call
`script(model, example_input=None)` and save the result.

Caveats (README, "Your own model"):
- A traced module records one run of forward: data-dependent branches (`if x.sum() > 0`) are frozen
  to the branch the example took, and train/eval differences (dropout, BatchNorm) are those of the
  mode it was traced in (train here). ddpbench flags a traced file in the report.
- torch.jit.freeze and torch.jit.optimize_for_inference fold the parameters into constants: such a
  file cannot train and ddpbench refuses it.
- Save with the PyTorch release ddpbench links against, or an older one: libtorch refuses files
  written by a newer release.
"""
import argparse
import importlib
import sys

import torch


def script(model, example_input=None):
    """The model as a ScriptModule in train() mode: scripted, or traced on `example_input` when
    scripting fails (None: raise the scripting error)."""
    model.train()
    try:
        return torch.jit.script(model)
    except Exception as error:  # scripting fails on Python constructs TorchScript lacks
        if example_input is None:
            raise RuntimeError(f"torch.jit.script failed ({error}); pass an example input "
                               "(--trace --input-shape ...) to trace the model instead") from error
        print(f"script_model.py: torch.jit.script failed ({str(error).splitlines()[0]}); tracing "
              "instead: data-dependent branches are frozen to the example's", file=sys.stderr)
        return torch.jit.trace(model, example_input)


def build(factory, kwargs, seed):
    module_name, _, attribute = factory.partition(":")
    if not attribute:
        raise SystemExit(f"script_model.py: '{factory}' is not MODULE:FACTORY "
                         "(e.g. torchvision.models:resnet18)")
    torch.manual_seed(seed)
    return getattr(importlib.import_module(module_name), attribute)(**kwargs)


def parse_value(text):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(text.lower(), text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("factory", help="MODULE:FACTORY, e.g. torchvision.models:resnet18")
    parser.add_argument("out", help="the TorchScript file to write")
    parser.add_argument("--kwargs", nargs="*", default=[], help="factory arguments, k=v")
    parser.add_argument("--seed", type=int, default=0, help="torch.manual_seed before building")
    parser.add_argument("--trace", action="store_true", help="trace when scripting fails")
    parser.add_argument("--input-shape", default="3,32,32", help="one sample's shape, for --trace")
    parser.add_argument("--input-dtype", default="float32", choices=["float32", "int64"])
    args = parser.parse_args()
    kwargs = dict(kv.split("=", 1) for kv in args.kwargs)
    model = build(args.factory, {k: parse_value(v) for k, v in kwargs.items()}, args.seed)
    example = None
    if args.trace:
        shape = [2] + [int(n) for n in args.input_shape.split(",")]
        example = (torch.randn(shape) if args.input_dtype == "float32"
                   else torch.randint(0, 2, shape))
    script(model, example).save(args.out)
    print(f"wrote {args.out} (torch {torch.__version__})")


if __name__ == "__main__":
    main()
