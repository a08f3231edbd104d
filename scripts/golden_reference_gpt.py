#!/usr/bin/python3
"""Writes tests/data/golden/reference_gpt.json: loss, logits and gradients of the lab's GPT computed by
PyTorch (autograd, float64), an implementation that shares no code with the engine. The engine's
reference pass (engine/train/model/reference_gpt.cpp) and its production path (stage.cpp + ops.cpp) are both
checked against this file by tests/unit/reference_gpt_test.cpp.

Run once, when the model's definition changes (Debian: apt-get install python3-torch; not needed to build
or test):
    /usr/bin/python3 scripts/golden_reference_gpt.py > tests/data/golden/reference_gpt.json

Parameters follow a closed-form rule (below, repeated in the test) rather than a random generator, so
the file need not carry them: value(name, i) for element i of tensor `name` (row-major), with
phase = 0.01 * (sum of the name's character codes):
    LayerNorm gains (ln*_w): 1 + 0.2 sin(0.37 i + phase)
    biases (*_b):            0.1 cos(0.91 i + phase)
    matrices:                0.35 sin(0.7 i + 0.013 i^2 + phase)
each computed in double and rounded to float32 (the engine's parameter type).
"""
import json
import math
import sys

import torch
import torch.nn.functional as F

CONFIG = {"vocab": 23, "context": 7, "layers": 2, "width": 8, "heads": 2}
B = 3


def value(name, i):
    phase = 0.01 * sum(ord(ch) for ch in name)
    if name.startswith("ln") or ".ln" in name:
        if name.endswith("_w"):
            return 1.0 + 0.2 * math.sin(0.37 * i + phase)
    if name.endswith("_b"):
        return 0.1 * math.cos(0.91 * i + phase)
    return 0.35 * math.sin(0.7 * i + 0.013 * i * i + phase)


def shapes(V, T, C, L):
    s = {"wte": (V, C), "wpe": (T, C)}
    for l in range(L):
        h = f"h{l}."
        s.update({h + "ln1_w": (C,), h + "ln1_b": (C,), h + "qkv_w": (C, 3 * C), h + "qkv_b": (3 * C,),
                  h + "proj_w": (C, C), h + "proj_b": (C,), h + "ln2_w": (C,), h + "ln2_b": (C,),
                  h + "fc_w": (C, 4 * C), h + "fc_b": (4 * C,), h + "fcproj_w": (4 * C, C), h + "fcproj_b": (C,)})
    s.update({"lnf_w": (C,), "lnf_b": (C,)})
    return s


def main():
    V, T, L, C, H = (CONFIG[k] for k in ("vocab", "context", "layers", "width", "heads"))
    hs = C // H
    P = {}
    for name, shape in shapes(V, T, C, L).items():
        n = math.prod(shape)
        vals = torch.tensor([value(name, i) for i in range(n)], dtype=torch.float32).to(torch.float64)
        P[name] = vals.reshape(shape).requires_grad_(True)
    g = torch.Generator().manual_seed(2020)
    tokens = torch.randint(0, V, (B, T + 1), generator=g)
    idx, tgt = tokens[:, :-1], tokens[:, 1:]

    x = P["wte"][idx] + P["wpe"][:T]
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    for l in range(L):
        h = f"h{l}."
        a = F.layer_norm(x, (C,), P[h + "ln1_w"], P[h + "ln1_b"], eps=1e-5)
        q, k, v = (a @ P[h + "qkv_w"] + P[h + "qkv_b"]).split(C, dim=-1)
        q, k, v = (t.view(B, T, H, hs).transpose(1, 2) for t in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(hs)
        att = F.softmax(att.masked_fill(~mask, float("-inf")), dim=-1)
        y = (att @ v).transpose(1, 2).reshape(B, T, C)
        x = x + y @ P[h + "proj_w"] + P[h + "proj_b"]
        a = F.layer_norm(x, (C,), P[h + "ln2_w"], P[h + "ln2_b"], eps=1e-5)
        x = x + F.gelu(a @ P[h + "fc_w"] + P[h + "fc_b"], approximate="tanh") @ P[h + "fcproj_w"] + P[h + "fcproj_b"]
    x = F.layer_norm(x, (C,), P["lnf_w"], P["lnf_b"], eps=1e-5)
    logits = x @ P["wte"].T
    loss = F.cross_entropy(logits.reshape(-1, V), tgt.reshape(-1))
    loss.backward()

    r = lambda t: [float(f"{v:.12g}") for v in t.detach().reshape(-1).tolist()]
    out = {
        "what": "GPT forward and backward by PyTorch autograd in float64 (scripts/golden_reference_gpt.py)",
        "torch_version": torch.__version__,
        "config": CONFIG,
        "batch": B,
        "tokens": tokens.reshape(-1).tolist(),
        "param_rule": "see scripts/golden_reference_gpt.py: value(name, i)",
        "loss": float(f"{loss.item():.15g}"),
        "logits": r(logits),
        "grads": {name: r(p.grad) for name, p in P.items()},
    }
    json.dump(out, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
