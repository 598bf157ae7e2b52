#!/usr/bin/env python3
"""docs/model.md's encoder family written in PyTorch, its parameters named as kime-graph's
checkpoints name them, so that a kime-graph checkpoint loads into it; exported to ONNX with
kime.onnx.export. bench/onnx_import.sh compiles that export beside kime-graph's Graph of the
same config and weights.

    PYTHONPATH=build/python /usr/bin/python3 bench/kime_torch.py CONFIG.json WEIGHTS.safetensors OUT.onnx [--roberta]

--roberta: the same network spelled as Hugging Face's RoBERTa is: no type input (a buffer of zeros
sliced by L picks the type table's row 0), positions padding_idx + cumsum(ids != pad) * (ids != pad)
with padding_idx 1 (the learned table behind two unused rows), inputs input_ids and attention_mask.
"""
import json
import math
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

import kime.onnx


def read_safetensors(path):
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        if t["dtype"] != "F32":
            raise SystemExit(f"{path}: {name} is {t['dtype']}; this script reads F32 checkpoints")
        a, b = t["data_offsets"]
        out[name] = torch.from_numpy(np.frombuffer(data[a:b], np.float32).reshape(t["shape"]).copy())
    return out


class Encoder(nn.Module):
    def __init__(self, cfg, weights):
        super().__init__()
        self.cfg = cfg
        self.hd = cfg["hidden"] // cfg["heads"]
        self.w = nn.ParameterDict({k.replace(".", "__"): nn.Parameter(v, requires_grad=False) for k, v in weights.items()})
        if cfg["pos"] == "rope":
            inv = cfg["rope_theta"] ** (-torch.arange(0, self.hd, 2, dtype=torch.float64) / self.hd)
            angles = torch.arange(cfg["max_pos"], dtype=torch.float64)[:, None] * inv[None]
            self.register_buffer("cos", torch.cat([angles.cos()] * 2, -1).float(), persistent=False)
            self.register_buffer("sin", torch.cat([angles.sin()] * 2, -1).float(), persistent=False)

    def p(self, name):
        return self.w[name.replace(".", "__")] if name.replace(".", "__") in self.w else None

    def norm(self, x, name):
        eps = self.cfg["norm_eps"]
        if self.cfg["norm"] == "rms":
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * self.p(name + ".weight")
        return F.layer_norm(x, (self.cfg["hidden"],), self.p(name + ".weight"), self.p(name + ".bias"), eps)

    def linear(self, x, name):
        return F.linear(x, self.p(name + ".weight"), self.p(name + ".bias"))

    def heads(self, t, n):
        B, L, _ = t.shape
        return t.view(B, L, n, self.hd).transpose(1, 2)

    def rope(self, t, L):
        half = self.hd // 2
        rot = torch.cat([-t[..., half:], t[..., :half]], -1)
        return t * self.cos[:L][None, None] + rot * self.sin[:L][None, None]

    def layer(self, x, l, key_pad):
        c, pre = self.cfg, f"layers.{l}"
        B, L, _ = x.shape
        a = self.norm(x, pre + ".attn_norm")
        q = self.heads(self.linear(a, pre + ".attn.q"), c["heads"])
        k = self.heads(self.linear(a, pre + ".attn.k"), c["kv_heads"])
        v = self.heads(self.linear(a, pre + ".attn.v"), c["kv_heads"])
        if c["pos"] == "rope":
            q, k = self.rope(q, L), self.rope(k, L)
        rep = c["heads"] // c["kv_heads"]
        if rep > 1:
            k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        s = (q @ k.transpose(-1, -2)) / math.sqrt(self.hd)
        s = s.masked_fill(key_pad, float("-inf"))
        o = (s.softmax(-1) @ v).transpose(1, 2).reshape(B, L, c["heads"] * self.hd)
        x = x + self.linear(o, pre + ".attn.o")
        m = self.norm(x, pre + ".mlp_norm")
        if c["act"] == "swiglu":
            h = F.silu(self.linear(m, pre + ".mlp.gate")) * self.linear(m, pre + ".mlp.up")
        else:
            h = F.gelu(self.linear(m, pre + ".mlp.up"))
        return x + self.linear(h, pre + ".mlp.down")

    def embed(self, input_ids, qtype):
        L = input_ids.shape[1]
        x = F.embedding(input_ids, self.p("embed.tok")) + F.embedding(qtype, self.p("embed.type"))[:, None]
        if self.cfg["pos"] == "learned":
            x = x + F.embedding(torch.arange(L), self.p("embed.pos"))[None]
        return x

    def embed_roberta(self, input_ids):
        B, L = input_ids.shape
        types = self.type_buffer[:, :L].expand(B, L)
        not_pad = input_ids.ne(ROBERTA_PAD).int()
        positions = (torch.cumsum(not_pad, dim=1).type_as(not_pad) * not_pad).long() + ROBERTA_PAD
        table = torch.cat([torch.zeros(ROBERTA_PAD + 1, self.p("embed.pos").shape[1]), self.p("embed.pos")])
        return F.embedding(input_ids, self.p("embed.tok")) + F.embedding(types, self.p("embed.type")) + \
            F.embedding(positions, table)

    def forward(self, input_ids, attention_mask, qtype=None):
        x = self.embed(input_ids, qtype) if qtype is not None else self.embed_roberta(input_ids)
        key_pad = (attention_mask == 0)[:, None, None, :]
        for l in range(self.cfg["layers"]):
            x = self.layer(x, l, key_pad)
        f = self.norm(x, "final_norm")
        return self.linear(f, "head.marker"), self.linear(f[:, 0], "head.act")


ROBERTA_PAD = 1


if __name__ == "__main__":
    cfg_path, weights_path, out = sys.argv[1:4]
    model = Encoder(json.load(open(cfg_path)), read_safetensors(weights_path)).eval()
    if "--roberta" in sys.argv[4:]:
        model.register_buffer("type_buffer", torch.zeros((1, model.cfg["max_pos"]), dtype=torch.long))
        kime.onnx.export(model, out, inputs=("input_ids", "attention_mask"))
    else:
        kime.onnx.export(model, out, inputs=("input_ids", "attention_mask", "qtype"))
