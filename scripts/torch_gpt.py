#!/usr/bin/env python3
"""The training lab's model in PyTorch, for scripts/bench-gpu.sh: the same pre-LN GPT (Radford et al. 2019),
tied input/output embedding, GELU (tanh form), LayerNorm eps 1e-5, byte vocabulary, AdamW (betas 0.9/0.95,
weight decay 0.1 on matrices only) as engine/train runs it, timed the same way (tokens per second of
the median step after the first). Prints one JSON object.

  python3 scripts/torch_gpt.py --layers 12 --width 768 --heads 12 --context 1024 --batch 8 --precision bf16 [--compile]

precision: fp32 (TF32 off), tf32 (TF32 matmuls), bf16 (torch.autocast bfloat16; fp32 master weights).
Written for this project; it reads no weights and no data set (random byte sequences stand in for the corpus:
the speed of a step does not depend on the bytes).
"""
import argparse
import json
import math
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--context", type=int, default=256)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--vocab", type=int, default=256)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--precision", choices=["fp32", "tf32", "bf16"], default="fp32")
    ap.add_argument("--compile", action="store_true")
    a = ap.parse_args()
    try:
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
    except ImportError as e:
        print(json.dumps({"error": f"PyTorch is not importable: {e}"}))
        return 3
    if not torch.cuda.is_available():
        print(json.dumps({"error": "PyTorch sees no CUDA GPU"}))
        return 3
    torch.backends.cuda.matmul.allow_tf32 = a.precision == "tf32"
    torch.backends.cudnn.allow_tf32 = a.precision == "tf32"
    dev = torch.device("cuda")
    torch.manual_seed(1)

    class Block(nn.Module):
        def __init__(self, C, H):
            super().__init__()
            self.H = H
            self.ln1 = nn.LayerNorm(C, eps=1e-5)
            self.qkv = nn.Linear(C, 3 * C)
            self.proj = nn.Linear(C, C)
            self.ln2 = nn.LayerNorm(C, eps=1e-5)
            self.fc = nn.Linear(C, 4 * C)
            self.fcproj = nn.Linear(4 * C, C)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
            q, k, v = (t.view(B, T, self.H, C // self.H).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).contiguous().view(B, T, C))
            return x + self.fcproj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(a.vocab, a.width)
            self.wpe = nn.Embedding(a.context, a.width)
            self.blocks = nn.ModuleList(Block(a.width, a.heads) for _ in range(a.layers))
            self.lnf = nn.LayerNorm(a.width, eps=1e-5)
            for name, p in self.named_parameters():  # GPT-2 initialisation, as engine/train does
                if p.dim() == 2:
                    std = 0.02 / math.sqrt(2 * a.layers) if name.endswith(("proj.weight", "fcproj.weight")) else 0.02
                    nn.init.normal_(p, 0.0, std)
                elif name.endswith("bias"):
                    nn.init.zeros_(p)

        def forward(self, idx, targets):
            x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
            for b in self.blocks:
                x = b(x)
            logits = self.lnf(x) @ self.wte.weight.t()  # tied head
            return F.cross_entropy(logits.float().reshape(-1, a.vocab), targets.reshape(-1))

    model = GPT().to(dev)
    decay = [p for n, p in model.named_parameters() if p.dim() == 2 and not n.startswith("wpe")]
    rest = [p for n, p in model.named_parameters() if not (p.dim() == 2 and not n.startswith("wpe"))]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                            lr=3e-4, betas=(0.9, 0.95), eps=1e-8, fused=True)
    step_fn = model
    if a.compile:
        step_fn = torch.compile(model)
    data = torch.randint(0, a.vocab, (a.batch, a.context + 1), device=dev)
    times = []
    loss_v = 0.0
    for _ in range(a.steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=a.precision == "bf16"):
            loss = step_fn(data[:, :-1], data[:, 1:])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        loss_v = loss.item()  # the step's one device-to-host copy, as in engine/train
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    med = statistics.median(times[1:] if len(times) > 1 else times)
    params = sum(p.numel() for p in model.parameters())
    print(json.dumps({"tokens_per_s_median_step": a.batch * a.context / med, "parameters": params, "loss": loss_v,
                      "precision": a.precision, "compile": a.compile, "torch": torch.__version__,
                      "gpu": torch.cuda.get_device_name(0)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
