"""torch_ddp_oracle_models.py — the models torch_ddp_oracle.py trains, built as ddpbench's
scenarios build them (the same parameter names, shapes and forward), or the user's TorchScript
file itself. The weights come from the exported "init", so only the structure has to match."""
import math

import torch
import torch.nn.functional as F


class ToyCNN(torch.nn.Module):
    """The PyTorch CIFAR-10 tutorial Net."""

    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 6, 5)
        self.pool = torch.nn.MaxPool2d(2, 2)
        self.conv2 = torch.nn.Conv2d(6, 16, 5)
        self.fc1 = torch.nn.Linear(16 * 5 * 5, 120)
        self.fc2 = torch.nn.Linear(120, 84)
        self.fc3 = torch.nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class GatedCNN(torch.nn.Module):
    """scenarios/models/gated_cnn_net.h: the same parameter names, shapes and forward."""

    MIN_LENGTH = 15 + 14 * 7  # both blocks need at least one window

    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(15000, 64)
        for name in ("conv1_a", "conv1_b", "conv2_a", "conv2_b"):
            setattr(self, name, torch.nn.Conv1d(64, 64, 15, stride=7))
        self.fc1 = torch.nn.Linear(64, 128)
        self.fc2 = torch.nn.Linear(128, 2)
        torch.nn.init.xavier_uniform_(self.embedding.weight)

    def forward(self, tokens):
        if tokens.shape[1] < self.MIN_LENGTH:
            tokens = F.pad(tokens, (0, self.MIN_LENGTH - tokens.shape[1]))
        x = self.embedding(tokens).transpose(1, 2)
        x = self.conv1_a(x) * torch.sigmoid(self.conv1_b(x))
        x = self.conv2_a(x) * torch.sigmoid(self.conv2_b(x))
        return self.fc2(self.fc1(x.mean(2)))


class GatedHeads(torch.nn.Module):
    """scenarios/models/gated_heads_net.h: a trunk and two heads; the last input column routes each
    row to head_a (0) or head_b (1), and a head no row selects is not run (no gradient)."""

    def __init__(self):
        super().__init__()
        self.trunk = torch.nn.Linear(9, 16)
        self.head_a = torch.nn.Linear(16, 10)
        self.head_b = torch.nn.Linear(16, 10)

    def forward(self, x):
        h = torch.tanh(self.trunk(x[:, :9]))
        gate = x[:, 9]
        out = torch.zeros(x.shape[0], 10, dtype=h.dtype, device=h.device)
        rows_a = (gate == 0).nonzero().squeeze(1)
        rows_b = (gate != 0).nonzero().squeeze(1)
        if rows_a.numel() > 0:
            out = out.index_copy(0, rows_a, self.head_a(h.index_select(0, rows_a)))
        if rows_b.numel() > 0:
            out = out.index_copy(0, rows_b, self.head_b(h.index_select(0, rows_b)))
        return out


class TinyResNet(torch.nn.Module):
    """scenarios/models/resnet.h's tiny_resnet_shape(): torchvision's ResNet layout (its BasicBlock,
    the same module names) with one block per stage at widths 16, 32, 64, 128. The weights come
    from "init", so only the structure has to match."""

    def __init__(self, num_classes, widths=(16, 32, 64, 128)):
        super().__init__()
        import torchvision  # here, not at the top: the models without it load faster
        nn = torch.nn
        self.conv1 = nn.Conv2d(3, widths[0], 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(widths[0])
        inplanes = widths[0]
        for i, (planes, stride) in enumerate(zip(widths, (1, 2, 2, 2))):
            downsample = None
            if stride != 1 or inplanes != planes:
                downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride=stride, bias=False),
                                           nn.BatchNorm2d(planes))
            block = torchvision.models.resnet.BasicBlock(inplanes, planes, stride, downsample)
            setattr(self, f"layer{i + 1}", nn.Sequential(block))
            inplanes = planes
        self.fc = nn.Linear(widths[-1], num_classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 3, stride=2, padding=1)
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class GptBlock(torch.nn.Module):
    """scenarios/models/gpt_net.h's block: nanoGPT's Block with its CausalSelfAttention (the
    explicit attention, not flash) and MLP, under the same parameter names."""

    def __init__(self, n_embd, n_head, dropout):
        super().__init__()
        self.n_head = n_head
        self.ln_1 = torch.nn.LayerNorm(n_embd)
        self.attn_qkv = torch.nn.Linear(n_embd, 3 * n_embd)
        self.attn_proj = torch.nn.Linear(n_embd, n_embd)
        self.ln_2 = torch.nn.LayerNorm(n_embd)
        self.mlp_fc = torch.nn.Linear(n_embd, 4 * n_embd)
        self.mlp_proj = torch.nn.Linear(4 * n_embd, n_embd)
        self.attn_dropout = torch.nn.Dropout(dropout)
        self.resid_dropout = torch.nn.Dropout(dropout)

    def attention(self, x):
        B, T, C = x.size()
        q, k, v = self.attn_qkv(x).split(C, dim=2)
        q, k, v = (y.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for y in (q, k, v))
        att = q.matmul(k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(causal.logical_not(), float("-inf"))
        att = self.attn_dropout(torch.softmax(att, -1))
        y = att.matmul(v).transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.attn_proj(y))

    def forward(self, x):
        x = x + self.attention(self.ln_1(x))
        return x + self.resid_dropout(self.mlp_proj(F.gelu(self.mlp_fc(self.ln_2(x)))))


class GptTiny(torch.nn.Module):
    """scenarios/models/gpt_net.h: nanoGPT's GPT at gpt_tiny's size, the output projection tied to
    wte (one parameter, as nanoGPT's tie leaves one in parameters()); logits [B, vocab, T]."""

    def __init__(self, vocab_size=64, block_size=16, n_layer=2, n_head=2, n_embd=32, dropout=0.0):
        super().__init__()
        self.wte = torch.nn.Embedding(vocab_size, n_embd)
        self.wpe = torch.nn.Embedding(block_size, n_embd)
        self.drop = torch.nn.Dropout(dropout)
        self.h = torch.nn.ModuleList(GptBlock(n_embd, n_head, dropout) for _ in range(n_layer))
        self.ln_f = torch.nn.LayerNorm(n_embd)

    def forward(self, tokens):
        pos = torch.arange(tokens.size(1), dtype=torch.long, device=tokens.device)
        x = self.drop(self.wte(tokens) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight).transpose(1, 2)


def build_model(meta):
    kind = meta["model"]
    if kind == "linear":
        return torch.nn.Linear(10, 10)
    if kind == "toy_cnn":
        return ToyCNN()
    if kind == "resnet18":
        import torchvision  # here, not at the top: the models without it load faster
        return torchvision.models.resnet18(num_classes=int(meta["num_classes"]))
    if kind == "tiny_resnet":
        return TinyResNet(int(meta["num_classes"]))
    if kind == "gated_cnn":
        return GatedCNN()
    if kind == "gated_heads":
        return GatedHeads()
    if kind == "gpt_tiny":
        return GptTiny()
    if kind == "torchscript":  # ddpbench run --model FILE: the user's scripted model itself
        return torch.jit.load(meta["model_file"])
    raise ValueError(f"unknown model {kind!r}")
