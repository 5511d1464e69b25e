"""script_test_models.py — the TorchScript files the ScriptModel tests load, made at test time by
the suite's Python (1.13 for the Debian build, the build's own torch for a PyPI build), with what
Python eager training of the same module computed, for the C++ side to reproduce.

    python3 tests/support/script_test_models.py DIR [--zoo | --floor]

Without --zoo, the small files:

DIR/small.pt            Conv + BatchNorm + ReLU + Linear, scripted through reference/script_model.py
DIR/small_expected.pt   dict: "parameter_names", "buffer_names" (Python's order), "init.<name>", three batches "x<i>"/"y<i>",
                        "loss<i>", and "final.<name>" after three SGD steps (lr 0.1, momentum 0.9)
                        of Python eager training on one thread
DIR/state_dict.pt       torch.save(state_dict): not TorchScript
DIR/frozen.pt           torch.jit.freeze of the scripted module: no parameters left to train
DIR/no_grad.pt          every parameter has requires_grad=False
DIR/two_inputs.pt       forward(x, y)
DIR/tuple_out.pt        forward returns a tuple
DIR/tied.pt             one weight tensor under two names
DIR/mlp.pt              Linear(10, 16) + Tanh + Linear(16, 10): fits linear_mse's data (e2e tests)
DIR/mlp_bn.pt           the same with BatchNorm1d(16) after the first Linear
DIR/relu6.pt            Linear(10, 16) + ReLU6 + Linear(16, 10): ReLU6's backward (hardtanh's) has no
                        bfloat16 CPU kernel in libtorch 1.13, which --amp bf16 must refuse at start
DIR/half_frozen.pt      Linear(10, 16) + Tanh + Linear(16, 16) + Tanh + Linear(16, 10), the middle
                        Linear frozen (requires_grad=False): DDP reduces only what trains
DIR/wide.pt             Linear(2, 262144): 2^18 outputs per sample (the default evaluation pass is cut)
DIR/tokens.pt           Embedding(50, 8) + mean over the sequence + Linear(8, 4): int64 tokens in
DIR/newer.pt            mlp.pt with its archive's format version set to 99: "saved by a newer PyTorch"
DIR/traced_dropout.pt   torch.jit.trace of Linear + Dropout(0.5): traced, one random op
DIR/data_classes.pt     --data: {"inputs": randn(24, 10), "targets": int64 classes < 10}
DIR/data_mse.pt         --data: {"inputs": randn(24, 10), "targets": randn(24, 10)}
DIR/data_<fault>.pt     --data files to refuse: keys (other keys), rows (23 targets), nan,
                        uint8 (inputs), narrow (7 features: the mlp's forward fails),
                        tensor (a bare tensor)
With --zoo, instead, the real models (tests/e2e/script_model_zoo_e2e_test.cpp):
DIR/mobilenet_v2.pt     torchvision's mobilenet_v2(num_classes=10, width_mult=0.25): BatchNorm,
                        ReLU6, dropout in the classifier; fits cifar_resnet18's 3x32x32 images
DIR/transformer.pt      Embedding + one nn.TransformerEncoderLayer (dropout 0.1) + mean pool +
                        Linear: int64 tokens in, 2 logits out; fits imdb_gcnn's data
DIR/odd_rows.pt        Linear(10, 17) + Tanh + Linear(17, 10): 17 rows, uneven shards at any S > 1
DIR/unused_branch.pt    the mlp with a second head forward never calls (an always-unused parameter)
DIR/resnet18.pt         torchvision's resnet18(num_classes=10): fits cifar_resnet18's images
With --floor, instead, the models that ask the most of the tolerance model
(tests/e2e/rounding_floor_e2e_test.cpp), all on 3x32x32 images with 10 classes:
DIR/shufflenet_v2_x0_5.pt  torchvision's: channel shuffle, depthwise convolutions, BatchNorm over
                        2x2 and 1x1 maps
DIR/mnasnet0_5.pt       torchvision's: depthwise convolutions, BatchNorm whose running statistics
                        from a few samples send its evaluation loss to inf
DIR/mobilenet_v3_small.pt  torchvision's: squeeze-and-excitation, hardswish
DIR/noise.pt            a convolution whose output gets torch.randn_like noise in forward, also in
                        eval mode
DIR/mc_dropout.pt       dropout with training=True: kept on in eval mode (MC dropout)
DIR/input_mean.pt       a buffer updated in forward with a running mean of the input, which the
                        forward then subtracts
"""
import os
import sys

import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "reference"))
from script_model import script  # noqa: E402


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(4 * 8 * 8, 5))

    def forward(self, x):
        return self.head(torch.relu(self.bn(self.conv(x))))


class TwoInputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x, y):
        return self.fc(x) + y


class TupleOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        out = self.fc(x)
        return out, out


class TokenTransformer(nn.Module):
    """Sized for imdb_gcnn's data: ids below 15000, two classes."""

    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(15000, 16)
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.1), num_layers=1)
        self.head = nn.Linear(16, 2)

    def forward(self, tokens):
        # nn.TransformerEncoderLayer takes (sequence, batch, features) without batch_first.
        x = self.encoder(self.embedding(tokens).transpose(0, 1))
        return self.head(x.mean(0))


class Tokens(nn.Module):
    """int64 token ids below 50 in, 4 values out: synthetic data's int64 inputs (e2e tests)."""

    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(50, 8)
        self.head = nn.Linear(8, 4)

    def forward(self, tokens):
        return self.head(self.embedding(tokens).mean(1))


class UnusedBranch(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 10))
        self.spare_head = nn.Linear(16, 10)  # never called: DDP needs find_unused_parameters

    def forward(self, x):
        return self.body(x)


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4, bias=False)
        self.b = nn.Linear(4, 4, bias=False)
        self.b.weight = self.a.weight

    def forward(self, x):
        return self.b(self.a(x))


def write_newer_version(src, dst):
    """A copy of `src` whose archive says format version 99: what a future PyTorch's file looks
    like to the linked libtorch, which reads versions up to 10 (1.13) or a little more (2.x)."""
    import zipfile
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.count("/") == 1 and item.filename.endswith("/version"):
                data = b"99\n"
            zout.writestr(item, data)


def write_data_files(out):
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(24, 10, generator=gen)
    classes = torch.randint(0, 10, (24,), generator=gen)
    files = {
        "classes": {"inputs": x, "targets": classes},
        "mse": {"inputs": x, "targets": torch.randn(24, 10, generator=gen)},
        "keys": {"inputs": x, "labels": classes},
        "rows": {"inputs": x, "targets": classes[:23]},
        "nan": {"inputs": x.clone().index_fill_(0, torch.tensor([5]), float("nan")),
                "targets": classes},
        "uint8": {"inputs": (x.abs() * 10).to(torch.uint8), "targets": classes},
        "narrow": {"inputs": x[:, :7].clone(), "targets": classes},
    }
    for name, content in files.items():
        torch.save(content, os.path.join(out, f"data_{name}.pt"))
    torch.save(x, os.path.join(out, "data_tensor.pt"))  # a tensor, not the dict


def write_zoo(out):
    import torchvision  # only here: the small files load without it, faster
    torch.manual_seed(2)
    script(torchvision.models.mobilenet_v2(num_classes=10, width_mult=0.25)).save(
        os.path.join(out, "mobilenet_v2.pt"))
    script(torchvision.models.resnet18(num_classes=10)).save(os.path.join(out, "resnet18.pt"))
    script(TokenTransformer()).save(os.path.join(out, "transformer.pt"))
    script(UnusedBranch()).save(os.path.join(out, "unused_branch.pt"))


class Noise(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        h = torch.relu(self.conv(x))
        h = h + 0.1 * torch.randn_like(h)
        return self.fc(h.mean(dim=(2, 3)))


class McDropout(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8, 10)

    def forward(self, x):
        h = torch.relu(self.conv(x)).mean(dim=(2, 3))
        return self.fc(nn.functional.dropout(h, 0.3, training=True))


class InputMean(nn.Module):
    """Normalises its input by a running mean it updates first, as BatchNorm keeps its
    statistics, but is no BatchNorm."""
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8, 10)
        self.register_buffer("mean", torch.zeros(3))

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                self.mean.mul_(0.9).add_(0.1 * x.mean(dim=(0, 2, 3)))
        h = torch.relu(self.conv(x - self.mean.view(1, 3, 1, 1)))
        return self.fc(h.mean(dim=(2, 3)))


def write_floor(out):
    import torchvision
    for seed, name in enumerate(["shufflenet_v2_x0_5", "mnasnet0_5", "mobilenet_v3_small"]):
        torch.manual_seed(seed)
        script(getattr(torchvision.models, name)(num_classes=10)).save(
            os.path.join(out, name + ".pt"))
    for name, make in [("noise", Noise), ("mc_dropout", McDropout), ("input_mean", InputMean)]:
        torch.manual_seed(0)
        script(make()).save(os.path.join(out, name + ".pt"))


def main():
    out = sys.argv[1]
    torch.set_num_threads(1)
    if sys.argv[2:] == ["--zoo"]:
        write_zoo(out)
        return
    if sys.argv[2:] == ["--floor"]:
        write_floor(out)
        return
    torch.manual_seed(0)
    model = Small()
    script(model).save(os.path.join(out, "small.pt"))
    expected = {"parameter_names": [n for n, _ in model.named_parameters()],
                "buffer_names": [n for n, _ in model.named_buffers()]}
    expected.update({"init." + k: v.clone() for k, v in model.state_dict().items()})
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    for step in range(3):
        torch.manual_seed(100 + step)
        x, y = torch.randn(6, 3, 8, 8), torch.randint(0, 5, (6,))
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        expected.update({f"x{step}": x, f"y{step}": y, f"loss{step}": loss.detach()})
    expected.update({"final." + k: v.clone() for k, v in model.state_dict().items()})
    torch.save(expected, os.path.join(out, "small_expected.pt"))

    torch.save(Small().state_dict(), os.path.join(out, "state_dict.pt"))
    torch.jit.freeze(torch.jit.script(Small()).eval()).save(os.path.join(out, "frozen.pt"))
    no_grad = Small()
    for p in no_grad.parameters():
        p.requires_grad_(False)
    torch.jit.script(no_grad).save(os.path.join(out, "no_grad.pt"))
    torch.jit.script(TwoInputs()).save(os.path.join(out, "two_inputs.pt"))
    torch.jit.script(TupleOut()).save(os.path.join(out, "tuple_out.pt"))
    torch.jit.script(Tied()).save(os.path.join(out, "tied.pt"))
    torch.manual_seed(1)
    script(nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 10))).save(
        os.path.join(out, "mlp.pt"))
    script(nn.Sequential(nn.Linear(10, 16), nn.BatchNorm1d(16), nn.Tanh(),
                         nn.Linear(16, 10))).save(os.path.join(out, "mlp_bn.pt"))
    half_frozen = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
                                nn.Linear(16, 10))
    half_frozen[2].requires_grad_(False)
    script(half_frozen).save(os.path.join(out, "half_frozen.pt"))
    script(Tokens()).save(os.path.join(out, "tokens.pt"))
    script(nn.Linear(2, 1 << 18)).save(os.path.join(out, "wide.pt"))
    write_newer_version(os.path.join(out, "mlp.pt"), os.path.join(out, "newer.pt"))
    write_data_files(out)
    torch.jit.trace(nn.Sequential(nn.Linear(10, 10), nn.Dropout(0.5)).train(),
                    torch.randn(2, 10), check_trace=False).save(
        os.path.join(out, "traced_dropout.pt"))
    # Last, so that the models above keep their draws.
    torch.manual_seed(2)
    script(nn.Sequential(nn.Linear(10, 17), nn.Tanh(), nn.Linear(17, 10))).save(
        os.path.join(out, "odd_rows.pt"))
    torch.manual_seed(3)
    script(nn.Sequential(nn.Linear(10, 16), nn.ReLU6(), nn.Linear(16, 10))).save(
        os.path.join(out, "relu6.pt"))


if __name__ == "__main__":
    main()
