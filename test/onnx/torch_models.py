#!/usr/bin/env python3
"""A zoo of tiny PyTorch encoders exported to ONNX, for kime-import's tests.

Every model follows (or, in the refuse set, deliberately breaks) kime's importer contract:

  inputs   input_ids [B, L] int64, attention_mask [B, L] int64 (1 = real token, 0 = padding at
           the end of a row), and optionally qtype [B] int64 (< 4) or token_type_ids [B, L] int64
  outputs  logits [B, L] or [B, L, 1] (one logit per token), act [B, 2] (per sequence)

All dims are dynamic ("B", "L"). Models are tiny (vocab 64, hidden 32, 4 heads, ffn 64,
2 layers, 64 positions), built deterministically with random non-trivial weights (norm gains and
biases too), and exported in eval() mode with do_constant_folding=True.

Run with Debian's python (torch 1.13, onnx 1.12):

  /usr/bin/python3 test/onnx/torch_models.py list
  /usr/bin/python3 test/onnx/torch_models.py export NAME OUT.onnx --opset 17
  /usr/bin/python3 test/onnx/torch_models.py check
  /usr/bin/python3 test/onnx/torch_models.py dump NAME --opset 17   (nodes with inferred shapes)

From Python: MODELS[name] (build, inputs, masked, refuse, note), export(name, path, opset),
make_feeds(name, seqs), torch_outputs(name, model, seqs) and onnx_outputs(name, onnx_model, seqs)
(the exported graph run by onnx_numpy_run, a small numpy interpreter for the ops used here).

export() is kime.onnx.export (the kime package on PYTHONPATH: build/python), which overrides one
torch 1.13 symbolic: aten::repeat_interleave, whose built-in export is wrong for
x[B, KV, L, hd].repeat_interleave(r, dim=1) with a dynamic L. Everything else is torch's own.
"""

import argparse
import dataclasses
import math
import os
import sys
import tempfile
import time
from collections import Counter
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

import kime.onnx
import torch.nn.functional as F
from torch import nn

VOCAB = 64
HIDDEN = 32
HEADS = 4
HD = HIDDEN // HEADS  # 8
KV_HEADS = 2
FFN = 64
LAYERS = 2
MAX_POS = 64
TYPES = 4
ROPE_THETA = 10000.0

OPSETS = (14, 17)
OUTPUTS = ("logits", "act")


# --------------------------------------------------------------------------------------------
# Weights


def _randomize(model: nn.Module) -> nn.Module:
    """Non-trivial random weights (the kime-graph --random-weights scheme): tables N(0, 1),
    matrices N(0, 1/fan_in), 1-D gains 1 + N(0, 0.1), biases N(0, 0.1). Then eval()."""
    with torch.no_grad():
        for mod in model.modules():
            for pname, p in mod.named_parameters(recurse=False):
                if isinstance(mod, nn.Embedding) or pname in ("tok", "type", "pos"):
                    p.normal_(0.0, 1.0)
                elif "bias" in pname:
                    p.normal_(0.0, 0.1)
                elif p.dim() == 1:
                    p.copy_(1.0 + 0.1 * torch.randn_like(p))
                else:
                    p.normal_(0.0, 1.0 / math.sqrt(p[0].numel()))
    return model.eval()


def _rope_tables(n_pos: int = MAX_POS, hd: int = HD, theta: float = ROPE_THETA):
    inv_freq = 1.0 / (theta ** (torch.arange(0, hd, 2, dtype=torch.float32) / hd))
    t = torch.arange(n_pos, dtype=torch.float32)
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)  # [n_pos, hd]
    return emb.cos(), emb.sin()


def rotate_half(x):
    # The half is a Python int, so the Slices have constant starts/ends and the exporter keeps
    # the head dims static (see rotate_half_dynamic).
    x1 = x[..., : HD // 2]
    x2 = x[..., HD // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rotate_half_dynamic(x):
    """Hugging Face's literal form: the half is traced (Shape, Gather, Div, Slice), the exporter
    loses the sizes of the sliced tensors, and a later repeat_interleave on them then exports
    as a Loop over SplitToSequence / ConcatFromSequence instead of Split + Expand + Reshape."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def _masked_mean(x, attention_mask):
    m = attention_mask[:, :, None].to(x.dtype)
    return (x * m).sum(1) / m.sum(1).clamp(min=1e-9)


# --------------------------------------------------------------------------------------------
# 1, 2: torch.nn.TransformerEncoder


class PtEncoder(nn.Module):
    def __init__(self, norm_first: bool, activation: str, final_norm: bool, use_qtype: bool,
                 mean_pool: bool, squeeze: bool):
        super().__init__()
        self.use_qtype, self.mean_pool, self.squeeze = use_qtype, mean_pool, squeeze
        self.tok = nn.Embedding(VOCAB, HIDDEN)
        self.pos = nn.Embedding(MAX_POS, HIDDEN)
        self.qtype_embed = nn.Embedding(TYPES, HIDDEN) if use_qtype else None
        layer = nn.TransformerEncoderLayer(HIDDEN, HEADS, FFN, dropout=0.1, activation=activation,
                                           batch_first=True, norm_first=norm_first)
        self.encoder = nn.TransformerEncoder(layer, LAYERS,
                                             norm=nn.LayerNorm(HIDDEN) if final_norm else None)
        self.token_head = nn.Linear(HIDDEN, 1)
        self.act_head = nn.Linear(HIDDEN, 2)

    def forward(self, input_ids, attention_mask, qtype=None):
        L = input_ids.shape[1]
        positions = torch.arange(L, device=input_ids.device)
        x = self.tok(input_ids) + self.pos(positions)[None]
        if self.use_qtype:
            x = x + self.qtype_embed(qtype)[:, None, :]
        x = self.encoder(x, src_key_padding_mask=attention_mask == 0)
        logits = self.token_head(x)
        if self.squeeze:
            logits = logits.squeeze(-1)
        pooled = _masked_mean(x, attention_mask) if self.mean_pool else x[:, 0]
        return logits, self.act_head(pooled)


# --------------------------------------------------------------------------------------------
# 3, 4: hand-written BERT


class BertSelfAttention(nn.Module):
    def __init__(self, scale_mul: bool):
        super().__init__()
        self.scale_mul = scale_mul
        self.query = nn.Linear(HIDDEN, HIDDEN)
        self.key = nn.Linear(HIDDEN, HIDDEN)
        self.value = nn.Linear(HIDDEN, HIDDEN)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x, ext_mask):
        B, L, _ = x.shape
        q = self.query(x).view(B, L, HEADS, HD).permute(0, 2, 1, 3)
        k = self.key(x).view(B, L, HEADS, HD).permute(0, 2, 1, 3)
        v = self.value(x).view(B, L, HEADS, HD).permute(0, 2, 1, 3)
        if self.scale_mul:
            scores = (q @ k.transpose(-1, -2)) * (HD ** -0.5)
        else:
            scores = q @ k.transpose(-1, -2) / math.sqrt(HD)
        if ext_mask.dtype == torch.bool:  # DistilBERT's: padding keys filled after expanding
            scores = scores.masked_fill(ext_mask.expand_as(scores), torch.finfo(scores.dtype).min)
        else:
            scores = scores + ext_mask
        probs = self.dropout(torch.softmax(scores, dim=-1))
        ctx = (probs @ v).permute(0, 2, 1, 3).contiguous()
        return ctx.reshape(B, L, HIDDEN)


class BertLayer(nn.Module):
    def __init__(self, scale_mul: bool, gelu_approx: str):
        super().__init__()
        self.attention = BertSelfAttention(scale_mul)
        self.attn_out = nn.Linear(HIDDEN, HIDDEN)
        self.attn_dropout = nn.Dropout(0.1)
        self.attn_norm = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.intermediate = nn.Linear(HIDDEN, FFN)
        self.act = nn.GELU(approximate=gelu_approx)
        self.output = nn.Linear(FFN, HIDDEN)
        self.out_dropout = nn.Dropout(0.1)
        self.out_norm = nn.LayerNorm(HIDDEN, eps=1e-12)

    def forward(self, x, ext_mask):
        x = self.attn_norm(x + self.attn_dropout(self.attn_out(self.attention(x, ext_mask))))
        h = self.output(self.act(self.intermediate(x)))
        return self.out_norm(x + self.out_dropout(h))


class Bert(nn.Module):
    """variant "post_ln": token_type_ids, learned positions (buffer sliced [:, :L]), additive
    -10000 mask, tanh pooler. variant "finfo": qtype per sequence, no positions, finfo.min mask,
    scale by Mul, tanh GELU, masked mean pooling. variant "hf_default_types": post_ln called as HF
    models are without token_type_ids (a buffer of zeros sliced [:, :L] and expanded), with
    DistilBERT's mask ((mask == 0).view(B, 1, 1, L).expand_as(scores), filled with finfo.min).
    variant "roberta": hf_default_types with RoBERTa's positions (padding_idx + cumsum(ids != pad)
    * (ids != pad), padding_idx 0, the zoo's pad id) and the additive -10000 mask."""

    def __init__(self, variant: str):
        super().__init__()
        self.variant = variant
        finfo = variant == "finfo"
        self.word_embeddings = nn.Embedding(VOCAB, HIDDEN)
        if not finfo:
            self.position_embeddings = nn.Embedding(MAX_POS, HIDDEN)
            self.register_buffer("position_ids", torch.arange(MAX_POS)[None])
        self.token_type_embeddings = nn.Embedding(TYPES, HIDDEN)
        if variant in ("hf_default_types", "roberta"):
            self.register_buffer("token_type_ids", torch.zeros((1, MAX_POS), dtype=torch.long))
        if variant == "roberta":  # positions 1 to MAX_POS after the padding_idx 0
            self.position_embeddings = nn.Embedding(MAX_POS + 1, HIDDEN)
        self.emb_norm = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.emb_dropout = nn.Dropout(0.1)
        self.layers = nn.ModuleList(
            [BertLayer(scale_mul=finfo, gelu_approx="tanh" if finfo else "none")
             for _ in range(LAYERS)])
        if not finfo:
            self.pooler = nn.Linear(HIDDEN, HIDDEN)
        self.token_head = nn.Linear(HIDDEN, 1)
        self.act_head = nn.Linear(HIDDEN, 2)

    def forward(self, input_ids, attention_mask, types=None):
        B, L = input_ids.shape
        x = self.word_embeddings(input_ids)
        if self.variant == "hf_default_types":
            types = self.token_type_ids[:, :L].expand(B, L)
            x = x + self.position_embeddings(self.position_ids[:, :L]) + self.token_type_embeddings(types)
            ext = (attention_mask == 0).view(B, 1, 1, L)
        elif self.variant == "roberta":
            types = self.token_type_ids[:, :L].expand(B, L)
            not_pad = input_ids.ne(0).int()
            positions = (torch.cumsum(not_pad, dim=1).type_as(not_pad) * not_pad).long()
            x = x + self.token_type_embeddings(types) + self.position_embeddings(positions)
            ext = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
        elif self.variant == "finfo":
            x = x + self.token_type_embeddings(types)[:, None, :]
            ext = (1 - attention_mask[:, None, None, :]) * torch.finfo(torch.float32).min
        else:
            x = x + self.position_embeddings(self.position_ids[:, :L])
            x = x + self.token_type_embeddings(types)
            ext = (1.0 - attention_mask[:, None, None, :].float()) * -10000.0
        x = self.emb_dropout(self.emb_norm(x))
        for layer in self.layers:
            x = layer(x, ext)
        logits = self.token_head(x)
        if self.variant == "finfo":
            pooled = _masked_mean(x, attention_mask)
        else:
            pooled = torch.tanh(self.pooler(x[:, 0]))
        return logits, self.act_head(pooled)


# --------------------------------------------------------------------------------------------
# 5, 6 and the refuse set: Llama-style encoders


@dataclasses.dataclass(frozen=True)
class LlamaCfg:
    rms: str = "rsqrt"          # rsqrt | recip_sqrt
    gqa: str = "repeat"         # repeat (repeat_interleave) | expand
    rope: str = "slice"         # slice ([:L]) | gather (cos[arange(L)])
    mask: str = "masked_fill"   # masked_fill | where | none | causal
    mlp: str = "swiglu"         # swiglu | geglu | chunk_geglu (T5 v1.1 / ModernBERT: one wi, chunk(2), tanh GELU)
    pool: str = "mean"          # mean (masked) | cls | unmasked_mean
    bias: bool = False
    head: str = "linear"        # linear | cumsum
    conv: bool = False          # a Conv1d over L before the layers
    half: str = "static"        # static | dynamic (rotate_half_dynamic)


class RMSNormRsqrt(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class RMSNormRecip(RMSNormRsqrt):
    def forward(self, x):
        return x * (1.0 / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)) * self.weight


class LlamaAttention(nn.Module):
    def __init__(self, cfg: LlamaCfg):
        super().__init__()
        self.cfg = cfg
        self.q_proj = nn.Linear(HIDDEN, HEADS * HD, bias=cfg.bias)
        self.k_proj = nn.Linear(HIDDEN, KV_HEADS * HD, bias=cfg.bias)
        self.v_proj = nn.Linear(HIDDEN, KV_HEADS * HD, bias=cfg.bias)
        self.o_proj = nn.Linear(HEADS * HD, HIDDEN, bias=cfg.bias)

    def _kv(self, t, B, L):
        rep = HEADS // KV_HEADS
        if self.cfg.gqa == "repeat":
            return t.repeat_interleave(rep, dim=1)
        return t[:, :, None].expand(B, KV_HEADS, rep, L, HD).reshape(B, HEADS, L, HD)

    def forward(self, x, cos, sin, mask):
        B, L, _ = x.shape
        q = self.q_proj(x).view(B, L, HEADS, HD).transpose(1, 2)
        k = self.k_proj(x).view(B, L, KV_HEADS, HD).transpose(1, 2)
        v = self.v_proj(x).view(B, L, KV_HEADS, HD).transpose(1, 2)
        rot = rotate_half if self.cfg.half == "static" else rotate_half_dynamic
        q = q * cos + rot(q) * sin
        k = k * cos + rot(k) * sin
        k, v = self._kv(k, B, L), self._kv(v, B, L)
        scores = q @ k.transpose(-1, -2) / math.sqrt(HD)
        if self.cfg.mask in ("masked_fill", "causal"):
            scores = scores.masked_fill(mask, float("-inf"))
        elif self.cfg.mask == "where":
            scores = scores + mask
        probs = torch.softmax(scores, dim=-1)
        out = (probs @ v).transpose(1, 2).reshape(B, L, HIDDEN)
        return self.o_proj(out)


class LlamaMLP(nn.Module):
    def __init__(self, cfg: LlamaCfg):
        super().__init__()
        self.geglu = cfg.mlp == "geglu"
        self.chunk = cfg.mlp == "chunk_geglu"
        if self.chunk:
            self.wi = nn.Linear(HIDDEN, 2 * FFN, bias=True)
        else:
            self.gate_proj = nn.Linear(HIDDEN, FFN, bias=False)
            self.up_proj = nn.Linear(HIDDEN, FFN, bias=False)
        self.down_proj = nn.Linear(FFN, HIDDEN, bias=False)

    def forward(self, x):
        if self.chunk:
            a, g = self.wi(x).chunk(2, dim=-1)
            return self.down_proj(F.gelu(a, approximate="tanh") * g)
        g = self.gate_proj(x)
        g = F.gelu(g) if self.geglu else F.silu(g)
        return self.down_proj(g * self.up_proj(x))


class LlamaLayer(nn.Module):
    def __init__(self, cfg: LlamaCfg, norm):
        super().__init__()
        self.input_layernorm = norm(HIDDEN)
        self.self_attn = LlamaAttention(cfg)
        self.post_attention_layernorm = norm(HIDDEN)
        self.mlp = LlamaMLP(cfg)

    def forward(self, x, cos, sin, mask):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin, mask)
        return x + self.mlp(self.post_attention_layernorm(x))


class Llama(nn.Module):
    def __init__(self, cfg: LlamaCfg):
        super().__init__()
        self.cfg = cfg
        norm = RMSNormRsqrt if cfg.rms == "rsqrt" else RMSNormRecip
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.conv = nn.Conv1d(HIDDEN, HIDDEN, 3, padding=1) if cfg.conv else None
        self.layers = nn.ModuleList([LlamaLayer(cfg, norm) for _ in range(LAYERS)])
        self.norm = norm(HIDDEN)
        self.token_head = nn.Linear(HIDDEN, 1)
        self.act_head = nn.Linear(HIDDEN, 2)
        cos, sin = _rope_tables()
        self.register_buffer("cos_cached", cos, persistent=False)
        self.register_buffer("sin_cached", sin, persistent=False)

    def forward(self, input_ids, attention_mask):
        cfg = self.cfg
        B, L = input_ids.shape
        x = self.embed_tokens(input_ids)
        if self.conv is not None:
            # zero the padding first, so that a sequence padded with zeros reads the same
            x = x * attention_mask[:, :, None].to(x.dtype)
            x = self.conv(x.transpose(1, 2)).transpose(1, 2)
        if cfg.rope == "slice":
            cos = self.cos_cached[:L][None, None]
            sin = self.sin_cached[:L][None, None]
        else:
            position_ids = torch.arange(L, device=input_ids.device)[None]
            cos = self.cos_cached[position_ids][:, None]
            sin = self.sin_cached[position_ids][:, None]
        if cfg.mask == "masked_fill":
            mask = attention_mask[:, None, None, :] == 0
        elif cfg.mask == "where":
            # tensors, not Python floats: torch 1.13 exports where(cond, float, float) with
            # float64 constants, and the Add into the float32 scores then is ill-typed ONNX
            mask = torch.where(attention_mask[:, None, None, :] == 0,
                               torch.tensor(float("-inf")), torch.tensor(0.0))
        elif cfg.mask == "causal":
            causal = torch.ones(L, L, dtype=torch.bool, device=input_ids.device).tril()
            mask = (attention_mask[:, None, None, :] == 0) | ~causal[None, None]
        else:
            mask = None
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        x = self.norm(x)
        logits = self.token_head(x)
        if cfg.head == "cumsum":
            logits = logits.cumsum(dim=1)
        if cfg.pool == "mean":
            pooled = _masked_mean(x, attention_mask)
        elif cfg.pool == "unmasked_mean":
            pooled = x.mean(1)
        else:
            pooled = x[:, 0]
        return logits, self.act_head(pooled)


# --------------------------------------------------------------------------------------------
# 7: nn.MultiheadAttention in hand-written pre-norm blocks (sequence-first inside)


class MhaBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = nn.LayerNorm(HIDDEN)
        self.attn = nn.MultiheadAttention(HIDDEN, HEADS, dropout=0.1, batch_first=False)
        self.norm2 = nn.LayerNorm(HIDDEN)
        self.fc1 = nn.Linear(HIDDEN, FFN)
        self.fc2 = nn.Linear(FFN, HIDDEN)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x, key_padding_mask):
        h = self.norm1(x).transpose(0, 1)  # [L, B, D]
        a, _ = self.attn(h, h, h, key_padding_mask=key_padding_mask, need_weights=False)
        x = x + self.dropout(a.transpose(0, 1))
        m = self.fc1(self.norm2(x))
        m = m * torch.sigmoid(m)  # SiLU by hand
        return x + self.dropout(self.fc2(m))


class MhaModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, HIDDEN)
        self.pos = nn.Embedding(MAX_POS, HIDDEN)
        self.pre = nn.Identity()
        self.blocks = nn.ModuleList([MhaBlock() for _ in range(LAYERS)])
        self.final_norm = nn.LayerNorm(HIDDEN)
        self.token_hidden = nn.Linear(HIDDEN, HIDDEN)
        self.token_out = nn.Linear(HIDDEN, 1)
        self.pooler = nn.Linear(HIDDEN, HIDDEN)
        self.act_head = nn.Linear(HIDDEN, 2)

    def forward(self, input_ids, attention_mask):
        B, L = input_ids.shape
        positions = torch.arange(L, device=input_ids.device)[None].expand(B, L)
        x = self.pre(self.tok(input_ids) + self.pos(positions))
        kpm = attention_mask == 0
        for block in self.blocks:
            x = block(x, kpm)
        x = self.final_norm(x)
        logits = self.token_out(torch.relu(self.token_hidden(x)))[..., 0]  # [B, L]
        # CLS by Slice. (x[:, :1].squeeze(1) exports as If(dim == 1, Squeeze, Identity) here,
        # as the exporter has lost the sizes after nn.MultiheadAttention.)
        pooled = torch.tanh(self.pooler(x[:, :1].reshape(B, HIDDEN)))
        return logits, self.act_head(pooled)


# --------------------------------------------------------------------------------------------
# 8, 9: kime's example model family (docs/model.md), state_dict names as in its checkpoints


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + self.eps) * self.weight


class KimeEmbed(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Parameter(torch.zeros(VOCAB, HIDDEN))
        # nn.Module.type() is a method, so setattr/register_parameter refuse the name "type";
        # put it in _parameters directly so that the state_dict name is embed.type
        self._parameters["type"] = nn.Parameter(torch.zeros(TYPES, HIDDEN))

    @property
    def type_table(self):
        return self._parameters["type"]


class KimeAttn(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(HIDDEN, HEADS * HD, bias=False)
        self.k = nn.Linear(HIDDEN, KV_HEADS * HD, bias=False)
        self.v = nn.Linear(HIDDEN, KV_HEADS * HD, bias=False)
        self.o = nn.Linear(HEADS * HD, HIDDEN, bias=False)


class KimeMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate = nn.Linear(HIDDEN, FFN, bias=False)
        self.up = nn.Linear(HIDDEN, FFN, bias=False)
        self.down = nn.Linear(FFN, HIDDEN, bias=False)


class KimeLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn_norm = RMSNorm(HIDDEN)
        self.attn = KimeAttn()
        self.mlp_norm = RMSNorm(HIDDEN)
        self.mlp = KimeMLP()


class KimeHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.marker = nn.Linear(HIDDEN, 1)
        self.act = nn.Linear(HIDDEN, 2)


class KimeFamily(nn.Module):
    """docs/model.md with norm=rms, act=swiglu, pos=rope, bias=false, heads 4, kv_heads 2."""

    def __init__(self, masked: bool = True):
        super().__init__()
        self.masked = masked
        self.embed = KimeEmbed()
        self.layers = nn.ModuleList([KimeLayer() for _ in range(LAYERS)])
        self.final_norm = RMSNorm(HIDDEN)
        self.head = KimeHead()
        cos, sin = _rope_tables()
        self.register_buffer("rope_cos", cos, persistent=False)
        self.register_buffer("rope_sin", sin, persistent=False)

    def _layer(self, layer: KimeLayer, x, cos, sin, key_pad):
        B, L, _ = x.shape
        rep = HEADS // KV_HEADS
        a = layer.attn_norm(x)
        q = layer.attn.q(a).view(B, L, HEADS, HD).transpose(1, 2)
        k = layer.attn.k(a).view(B, L, KV_HEADS, HD).transpose(1, 2)
        v = layer.attn.v(a).view(B, L, KV_HEADS, HD).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        # query head h reads kv head h // rep
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(HD)
        if key_pad is not None:
            scores = scores.masked_fill(key_pad, float("-inf"))
        attn = torch.matmul(torch.softmax(scores, dim=-1), v)
        x = x + layer.attn.o(attn.transpose(1, 2).reshape(B, L, HEADS * HD))
        m = layer.mlp_norm(x)
        return x + layer.mlp.down(F.silu(layer.mlp.gate(m)) * layer.mlp.up(m))

    def forward(self, input_ids, *rest):
        if self.masked:
            attention_mask, qtype = rest
        else:
            (qtype,) = rest
        L = input_ids.shape[1]
        x = F.embedding(input_ids, self.embed.tok)
        x = x + F.embedding(qtype, self.embed.type_table)[:, None]
        cos = self.rope_cos[:L][None, None]
        sin = self.rope_sin[:L][None, None]
        key_pad = (attention_mask == 0)[:, None, None, :] if self.masked else None
        for layer in self.layers:
            x = self._layer(layer, x, cos, sin, key_pad)
        f = self.final_norm(x)
        return self.head.marker(f), self.head.act(f[:, 0])


# --------------------------------------------------------------------------------------------
# Registry


@dataclasses.dataclass(frozen=True)
class ModelCase:
    build: Callable[[], nn.Module]
    inputs: Tuple[str, ...]
    masked: bool
    refuse: Optional[str]
    note: str


def _builder(seed: int, ctor: Callable[[], nn.Module]) -> Callable[[], nn.Module]:
    def build() -> nn.Module:
        torch.manual_seed(seed)
        return _randomize(ctor())
    return build


IM = ("input_ids", "attention_mask")

MODELS: Dict[str, ModelCase] = {
    "pt_encoder_post_relu": ModelCase(
        _builder(101, lambda: PtEncoder(False, "relu", False, False, False, False)), IM, True,
        None, "nn.TransformerEncoder post-norm ReLU, learned positions (arange), CLS act"),
    "pt_encoder_pre_gelu": ModelCase(
        _builder(102, lambda: PtEncoder(True, "gelu", True, True, True, True)),
        IM + ("qtype",), True, None,
        "nn.TransformerEncoder pre-norm GELU + final LayerNorm, qtype, masked mean, logits [B,L]"),
    "bert_post_ln": ModelCase(
        _builder(103, lambda: Bert("post_ln")), IM + ("token_type_ids",), True, None,
        "hand-written BERT, position_ids buffer, token_type_ids, -10000 mask, tanh pooler"),
    "bert_finfo_tanh_gelu": ModelCase(
        _builder(104, lambda: Bert("finfo")), IM + ("qtype",), True, None,
        "BERT without positions, finfo.min mask, Mul scale, tanh GELU, qtype, masked mean"),
    "bert_hf_default_types": ModelCase(
        _builder(111, lambda: Bert("hf_default_types")), IM, True, None,
        "BERT called without token_type_ids (HF's zero buffer sliced by L), DistilBERT's expanded mask"),
    "roberta_positions": ModelCase(
        _builder(112, lambda: Bert("roberta")), IM, True, None,
        "RoBERTa's positions from the non-pad count (padding_idx 0), zero type buffer, -10000 mask"),
    "llama_rope_gqa_repeat": ModelCase(
        _builder(105, lambda: Llama(LlamaCfg())), IM, True, None,
        "RMSNorm (rsqrt), RoPE sliced tables, GQA repeat_interleave, SwiGLU, -inf masked_fill"),
    "llama_rope_dynamic_half": ModelCase(
        _builder(110, lambda: Llama(LlamaCfg(half="dynamic"))), IM, True, None,
        "llama_rope_gqa_repeat with HF's rotate_half: Slice ends from Shape/Div at run time"),
    "llama_expand_geglu": ModelCase(
        _builder(106, lambda: Llama(LlamaCfg(rms="recip_sqrt", gqa="expand", rope="gather",
                                             mask="where", mlp="geglu", pool="cls",
                                             bias=True))), IM, True, None,
        "RMSNorm (1/sqrt), RoPE gathered by arange, GQA expand, GeGLU, where(-inf) mask, CLS"),
    "llama_chunk_geglu": ModelCase(
        _builder(113, lambda: Llama(LlamaCfg(mlp="chunk_geglu"))), IM, True, None,
        "a gated MLP from one linear's chunk(2), tanh GELU on the first half (T5 v1.1, ModernBERT)"),
    "mha_silu_tanh": ModelCase(
        _builder(107, MhaModel), IM, True, None,
        "nn.MultiheadAttention seq-first in pre-norm blocks, x*sigmoid(x), ReLU, tanh pooler"),
    "kime_family": ModelCase(
        _builder(108, lambda: KimeFamily(True)), IM + ("qtype",), True, None,
        "kime's example family (docs/model.md): rms, swiglu, rope, GQA 4/2, CLS act"),
    "no_mask_model": ModelCase(
        _builder(109, lambda: KimeFamily(False)), ("input_ids", "qtype"), False, None,
        "kime family without attention_mask (unmasked attention): one sequence per run"),
    # ---- outside the contract
    "refuse_unmasked_attention": ModelCase(
        _builder(201, lambda: Llama(LlamaCfg(mask="none"))), IM, False, "not masked",
        "attention_mask used only by the masked mean; attention reads the padding"),
    "refuse_unmasked_mean": ModelCase(
        _builder(202, lambda: Llama(LlamaCfg(pool="unmasked_mean"))), IM, False, "mean",
        "attention masked, but act = x.mean(1) over the padding too"),
    "refuse_causal": ModelCase(
        _builder(203, lambda: Llama(LlamaCfg(mask="causal"))), IM, True, "mask",
        "causal (tril) mask or'ed with the key mask"),
    "refuse_conv": ModelCase(
        _builder(204, lambda: Llama(LlamaCfg(conv=True))), IM, True, "Conv",
        "Conv1d (kernel 3) over L on the masked embeddings"),
    "refuse_cumsum": ModelCase(
        _builder(205, lambda: Llama(LlamaCfg(head="cumsum"))), IM, True, "CumSum",
        "token logits = cumsum over L of the token head"),
}


# --------------------------------------------------------------------------------------------
# Export and reference outputs


def make_feeds(case_name: str, seqs) -> Dict[str, np.ndarray]:
    """The padded int64 inputs of `seqs` ([(ids, markers, qtype)]) by input name: pad id 0,
    mask 0, token_type_ids = the sequence's qtype on its real tokens and 0 on padding."""
    return kime.onnx.padded(seqs, MODELS[case_name].inputs)


def _example_seqs():
    rng = np.random.default_rng(0)
    return [(rng.integers(1, VOCAB, n).tolist(), [], int(rng.integers(0, TYPES))) for n in (7, 4, 6)]


def export(case_name: str, path: str, opset: int) -> None:
    """kime.onnx.export of the model (which also works around torch 1.13's repeat_interleave
    export and traces nn.TransformerEncoder off its fused path)."""
    case = MODELS[case_name]
    kime.onnx.export(case.build(), path, case.inputs, opset, example=_example_seqs())


def _run(case_name: str, model: nn.Module, seqs, math_path: bool = False):
    if not seqs:
        return np.zeros((0,), np.float64), np.zeros((0, 2), np.float64)
    for s in seqs:
        if len(s[0]) == 0:
            raise ValueError("torch_outputs: empty sequences have no torch reference")
        if any(not 0 <= m < len(s[0]) for m in s[1]):
            raise ValueError("torch_outputs: marker outside its sequence")
    feeds = make_feeds(case_name, seqs)
    args = tuple(torch.from_numpy(feeds[n]) for n in MODELS[case_name].inputs)
    # math_path: grad enabled, so torch runs the same (non-fused) code path that export traces
    ctx = torch.enable_grad() if math_path else torch.no_grad()
    with ctx:
        logits, act = model(*args)
    B, L = feeds["input_ids"].shape
    logits = logits.detach().reshape(B, L).numpy().astype(np.float64)
    act = act.detach().numpy().astype(np.float64).reshape(B, 2)
    marker_logits = [logits[b, np.asarray(s[1], np.int64)] for b, s in enumerate(seqs)]
    return np.concatenate(marker_logits), act


def torch_outputs(case_name: str, model: nn.Module, seqs, math_path: bool = False):
    """Reference outputs of `model` (built by MODELS[case_name].build) for `seqs`, a list of
    (ids, markers, qtype): logits [M] (logits at each sequence's markers, in order) and
    act [S, 2], both float64 (computed in float32). One padded batch, except for unmasked
    models without an attention_mask input, which see each sequence alone."""
    case = MODELS[case_name]
    if not case.masked and "attention_mask" not in case.inputs:
        parts = [_run(case_name, model, [s], math_path) for s in seqs]
        if not parts:
            return _run(case_name, model, [], math_path)
        return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))
    return _run(case_name, model, seqs, math_path)


def _per_sequence(case_name: str, model: nn.Module, seqs, math_path: bool = False):
    parts = [_run(case_name, model, [s], math_path) for s in seqs]
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


# --------------------------------------------------------------------------------------------
# A numpy ONNX interpreter (no onnxruntime here), so that check runs the exported graphs


_NP_TYPES = {1: np.float32, 6: np.int32, 7: np.int64, 9: np.bool_, 11: np.float64}
_erf = np.vectorize(math.erf, otypes=[np.float64])


def _ints(t) -> List[int]:
    return [int(v) for v in np.asarray(t).reshape(-1)]


def _slice(data, starts, ends, axes=None, steps=None):
    axes = range(len(starts)) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    index = [slice(None)] * data.ndim
    for s, e, ax, st in zip(_ints(starts), _ints(ends), _ints(axes), _ints(steps)):
        assert st == 1, "Slice steps != 1 not needed here"
        n = data.shape[ax]
        s = min(n, max(0, s + n if s < 0 else s))
        e = min(n, max(0, e + n if e < 0 else e))
        index[ax] = slice(s, e)
    return data[tuple(index)]


def _conv1d(x, w, b, a):
    assert a.get("group", 1) == 1 and set(a.get("dilations", [1])) == {1}
    assert set(a.get("strides", [1])) == {1}
    pads = a.get("pads", [0, 0])
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[1])))
    k = w.shape[2]
    n = xp.shape[2] - k + 1
    out = sum(np.einsum("bcl,oc->bol", xp[:, :, t:t + n], w[:, :, t]) for t in range(k))
    return (out + (0 if b is None else b[None, :, None])).astype(np.float32)


def _layer_norm(x, w, b, a):
    axes = tuple(range(a.get("axis", -1) % x.ndim, x.ndim))
    mu = x.mean(axis=axes, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mu) / np.sqrt(var + np.float32(a.get("epsilon", 1e-5))) * w
    return (y if b is None else y + b).astype(x.dtype)


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(x.dtype)


def _binary(op, a, b):
    if op != "Pow" and a.dtype != b.dtype:
        raise TypeError(f"{op} on {a.dtype} and {b.dtype}")
    if op == "Equal":
        return a == b
    if op == "Or":
        return a | b
    if op == "Div" and np.issubdtype(a.dtype, np.integer):
        return np.trunc(a / b).astype(a.dtype)
    f = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
         "Pow": np.power}[op]
    return np.asarray(f(a, b)).astype(a.dtype)


def _run_graph(graph, env):
    import onnx
    from onnx import numpy_helper

    env = dict(env)
    for t in graph.initializer:
        env[t.name] = numpy_helper.to_array(t)
    for node in graph.node:
        op = node.op_type
        a = {at.name: at if at.type == onnx.AttributeProto.GRAPH
             else onnx.helper.get_attribute_value(at) for at in node.attribute}
        x = [env[i] if i else None for i in node.input]
        x += [None] * 5
        unary = {"Neg": np.negative, "Sqrt": np.sqrt, "Tanh": np.tanh, "Not": np.logical_not,
                 "Reciprocal": lambda v: 1 / v, "Erf": _erf, "Identity": lambda v: v,
                 "Sigmoid": lambda v: 1 / (1 + np.exp(-v)), "Relu": lambda v: np.maximum(v, 0)}
        if op == "Constant":
            r = numpy_helper.to_array(a["value"])
        elif op in ("Add", "Sub", "Mul", "Div", "Pow", "Equal", "Or"):
            r = _binary(op, x[0], x[1])
        elif op in unary:
            r = np.asarray(unary[op](x[0])).astype(x[0].dtype)
        elif op == "Cast":
            r = x[0].astype(_NP_TYPES[a["to"]])
        elif op == "Clip":
            r = x[0] if x[1] is None else np.maximum(x[0], x[1])
            r = (r if x[2] is None else np.minimum(r, x[2])).astype(x[0].dtype)
        elif op == "Shape":
            r = np.array(x[0].shape, np.int64)
        elif op == "Gather":
            r = np.take(x[0], x[1], axis=a.get("axis", 0))
        elif op == "Unsqueeze":
            r = x[0]
            rank = r.ndim + len(_ints(x[1]))
            for ax in sorted(v % rank for v in _ints(x[1])):
                r = np.expand_dims(r, ax)
        elif op == "Squeeze":
            r = np.squeeze(x[0], axis=tuple(_ints(x[1])) if x[1] is not None else None)
        elif op == "Concat":
            r = np.concatenate([v for v in x if v is not None], axis=a["axis"])
        elif op == "Reshape":
            shape = _ints(x[1])
            if not a.get("allowzero", 0):
                shape = [x[0].shape[i] if v == 0 else v for i, v in enumerate(shape)]
            r = x[0].reshape(shape)
        elif op == "Transpose":
            r = np.transpose(x[0], a.get("perm"))
        elif op == "Expand":
            r = np.broadcast_to(x[0], np.broadcast_shapes(x[0].shape, tuple(_ints(x[1])))).copy()
        elif op == "ConstantOfShape":
            v = numpy_helper.to_array(a["value"]) if "value" in a else np.zeros(1, np.float32)
            r = np.full(tuple(_ints(x[0])), v.reshape(-1)[0], v.dtype)
        elif op == "Range":
            r = np.arange(x[0], x[1], x[2]).astype(x[0].dtype)
        elif op == "Slice":
            r = _slice(x[0], x[1], x[2], x[3], x[4])
        elif op == "Split":
            ax = a.get("axis", 0)
            sizes = _ints(x[1]) if x[1] is not None else a.get("split")
            if sizes is None:
                sizes = [x[0].shape[ax] // len(node.output)] * len(node.output)
            r = np.split(x[0], np.cumsum(sizes)[:-1], axis=ax)
        elif op == "MatMul":
            r = np.matmul(x[0], x[1])
        elif op == "Gemm":
            am = x[0].T if a.get("transA", 0) else x[0]
            bm = x[1].T if a.get("transB", 0) else x[1]
            r = a.get("alpha", 1.0) * (am @ bm)
            r = (r if x[2] is None else r + a.get("beta", 1.0) * x[2]).astype(np.float32)
        elif op == "Softmax":
            r = _softmax(x[0], a.get("axis", -1))
        elif op in ("ReduceMean", "ReduceSum"):
            axes = a.get("axes") if x[1] is None else _ints(x[1])
            f = np.mean if op == "ReduceMean" else np.sum
            r = f(x[0], axis=tuple(axes), keepdims=bool(a.get("keepdims", 1))).astype(x[0].dtype)
        elif op == "LayerNormalization":
            r = _layer_norm(x[0], x[1], x[2], a)
        elif op == "Where":
            if x[1].dtype != x[2].dtype:
                raise TypeError(f"Where on {x[1].dtype} and {x[2].dtype}")
            r = np.where(x[0], x[1], x[2])
        elif op == "Trilu":
            k = 0 if x[1] is None else int(x[1])
            r = np.triu(x[0], k) if a.get("upper", 1) else np.tril(x[0], k)
        elif op == "CumSum":
            assert not a.get("exclusive", 0) and not a.get("reverse", 0)
            r = np.cumsum(x[0], axis=int(x[1])).astype(x[0].dtype)
        elif op == "Conv":
            r = _conv1d(x[0], x[1], x[2], a)
        elif op == "If":
            branch = a["then_branch" if bool(x[0]) else "else_branch"].g
            r = _run_graph(branch, env)
            r = r if len(node.output) > 1 else r[0]
        else:
            raise NotImplementedError(f"onnx_numpy_run: op {op}")
        outs = r if len(node.output) > 1 else [r]
        for name, v in zip(node.output, outs):
            v = np.asarray(v)
            if v.dtype == np.float64:
                raise TypeError(f"{op} {name} is float64")
            env[name] = v
    return [env[o.name] for o in graph.output]


def onnx_numpy_run(model, feeds: Dict[str, np.ndarray]) -> List[np.ndarray]:
    """Runs an onnx.ModelProto on numpy feeds (float32 arithmetic): a small reference
    interpreter for just the ops these exports contain. Raises on any other op, and on ill-typed
    arithmetic (e.g. Add of float32 and float64)."""
    return _run_graph(model.graph, feeds)


# --------------------------------------------------------------------------------------------
# Checks and dumps


def _check_onnx(case_name: str, path: str):
    import onnx
    from onnx import shape_inference

    case = MODELS[case_name]
    m = onnx.load(path)
    onnx.checker.check_model(m)
    m = shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
    inputs = tuple(i.name for i in m.graph.input)
    assert inputs == case.inputs, (case_name, inputs)
    outputs = tuple(o.name for o in m.graph.output)
    assert outputs == OUTPUTS, (case_name, outputs)

    def dims(v):
        return [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]

    for v in list(m.graph.input) + list(m.graph.output):
        d = dims(v)
        want = {"qtype": ["B"], "act": ["B", 2]}.get(v.name, ["B", "L"])
        assert d[:len(want)] == want and len(d) in (len(want), len(want) + 1), (v.name, d)
        if v.name == "logits" and len(d) == 3:
            assert d[2] == 1, d
    bad = [n.op_type for n in m.graph.node if n.domain not in ("", "ai.onnx")]
    assert not bad, (case_name, "non-standard ops", bad)
    return Counter(n.op_type for n in m.graph.node)


def _random_seqs(rng, n=3, max_len=9):
    lens = [int(x) for x in rng.integers(1, max_len + 1, n)]
    if len(set(lens)) == 1:
        lens[0] = 1 + lens[0] % max_len
    return [(rng.integers(1, VOCAB, k).tolist(), list(range(k)), int(rng.integers(0, TYPES)))
            for k in lens]


def _max_diff(a, b) -> float:
    return max(float(np.max(np.abs(a[0] - b[0]), initial=0.0)),
               float(np.max(np.abs(a[1] - b[1]), initial=0.0)))


def onnx_outputs(case_name: str, onnx_model, seqs):
    """torch_outputs for an exported graph, run by onnx_numpy_run: same batching, same
    (logits [M], act [S, 2]) float64 result."""
    case = MODELS[case_name]
    groups = [seqs] if case.masked or "attention_mask" in case.inputs else [[s] for s in seqs]
    logits, acts = [], []
    for group in groups:
        if not group:
            continue
        feeds = make_feeds(case_name, group)
        B, L = feeds["input_ids"].shape
        tl, act = onnx_numpy_run(onnx_model, feeds)
        assert tl.shape in ((B, L), (B, L, 1)) and act.shape == (B, 2), (tl.shape, act.shape)
        tl = tl.reshape(B, L)
        logits += [tl[b, np.asarray(s[1], np.int64)] for b, s in enumerate(group)]
        acts.append(act)
    if not acts:
        return np.zeros((0,), np.float64), np.zeros((0, 2), np.float64)
    return (np.concatenate(logits).astype(np.float64),
            np.concatenate(acts).astype(np.float64))


def check() -> int:
    """Exports every model at each opset, checks the ONNX (checker, strict shape inference,
    names, dynamic dims, standard ops only), runs the exported graphs with onnx_numpy_run
    against torch on batches unlike the traced one, and checks that the masked models mask
    (padded batch == each sequence alone) and that the unmasked ones really do not."""
    import onnx

    import warnings

    warnings.simplefilter("ignore")  # tracer and nested-tensor prototype warnings
    t0 = time.time()
    rng = np.random.default_rng(1234)
    failures = []
    worst_onnx = 0.0
    print(f"{'model':27} {'inputs':38} {'masked':6} {'refuse':10} "
          f"{'nodes14':>7} {'nodes17':>7} {'onnx-torch':>10} {'pad-vs-seq':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, case in MODELS.items():
            try:
                model = case.build()
                seqs = _random_seqs(rng)
                long_seqs = _random_seqs(rng, n=2, max_len=MAX_POS)
                long_seqs[0] = (rng.integers(1, VOCAB, MAX_POS).tolist(),
                                [0, MAX_POS - 1], 3)
                counts = {}
                onnx_diff = 0.0
                for opset in OPSETS:
                    path = os.path.join(tmp, f"{name}.{opset}.onnx")
                    export(name, path, opset)
                    counts[opset] = sum(_check_onnx(name, path).values())
                    m = onnx.load(path)
                    for batch in (seqs, long_seqs, seqs[:1]):
                        d = _max_diff(onnx_outputs(name, m, batch),
                                      torch_outputs(name, model, batch))
                        onnx_diff = max(onnx_diff, d)
                assert onnx_diff <= 1e-4, f"ONNX graph vs torch differ by {onnx_diff:.2e}"
                worst_onnx = max(worst_onnx, onnx_diff)
                padded = torch_outputs(name, model, seqs)
                padded_math = torch_outputs(name, model, seqs, math_path=True)
                alone = _per_sequence(name, model, seqs, math_path=True)
                fast_vs_math = _max_diff(padded, padded_math)
                assert fast_vs_math <= 1e-5, f"no_grad vs traced path differ by {fast_vs_math:.2e}"
                diff = _max_diff(padded_math, alone)
                if case.masked:
                    assert diff <= 1e-5, f"padded vs per-sequence differ by {diff:.2e}"
                    verdict = f"{diff:.1e}"
                elif "attention_mask" in case.inputs:
                    # the defect is real: padding changes the outputs
                    assert diff > 1e-3, f"unmasked model unaffected by padding ({diff:.2e})"
                    verdict = f"{diff:.1e}!"
                else:
                    verdict = "per-seq"
                print(f"{name:27} {','.join(case.inputs):38} {str(case.masked):6} "
                      f"{str(case.refuse):10} {counts[14]:7} {counts[17]:7} "
                      f"{onnx_diff:10.1e} {verdict:>10}")
            except Exception as e:  # noqa: BLE001 -- report every model, then fail
                failures.append(name)
                print(f"{name:27} FAILED: {type(e).__name__}: {e}")
    dt = time.time() - t0
    n = len(MODELS)
    failed = f"; FAILED: {', '.join(failures)}" if failures else ""
    print(f"check: {n - len(failures)}/{n} models ok at opsets {OPSETS}, ONNX vs torch within "
          f"{worst_onnx:.1e}, in {dt:.1f}s{failed}")
    return 1 if failures else 0


def dump(case_name: str, opset: int) -> None:
    """Every node with its inputs, attributes and inferred output shapes."""
    import onnx
    from onnx import numpy_helper, shape_inference

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "m.onnx")
        export(case_name, path, opset)
        m = shape_inference.infer_shapes(onnx.load(path))
    g = m.graph
    inits = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    shapes = {}
    for v in list(g.input) + list(g.value_info) + list(g.output):
        t = v.type.tensor_type
        dt = onnx.TensorProto.DataType.Name(t.elem_type).lower()
        if not t.HasField("shape"):
            shapes[v.name] = dt + "[?]"  # rank unknown
        else:
            shapes[v.name] = "%s[%s]" % (dt, ",".join(d.dim_param or str(d.dim_value or "?")
                                                      for d in t.shape.dim))

    def show_value(arr):
        if arr.size <= 8:
            return f"{arr.dtype}{list(arr.shape)}={arr.flatten().tolist()}"
        return f"{arr.dtype}{list(arr.shape)}"

    def arg(name):
        if name in inits:
            return f"{name}<init {show_value(inits[name])}>"
        return name

    def attr(a):
        v = onnx.helper.get_attribute_value(a)
        if isinstance(v, onnx.TensorProto):
            v = show_value(numpy_helper.to_array(v))
        elif isinstance(v, onnx.GraphProto):
            v = f"<graph {v.name}: {len(v.node)} nodes, below>"
        elif isinstance(v, bytes):
            v = v.decode()
        return f"{a.name}={v}"

    def nodes(graph, indent):
        for n in graph.node:
            attrs = ", ".join(attr(a) for a in n.attribute)
            outs = ", ".join(f"{o}:{shapes.get(o, '?')}" for o in n.output)
            print(f"{indent}{outs} = {n.op_type}({', '.join(arg(x) for x in n.input)})"
                  + (f" [{attrs}]" if attrs else ""))
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    sub = a.g
                    print(f"{indent}  {a.name} {sub.name}({', '.join(i.name for i in sub.input)})"
                          f" -> ({', '.join(o.name for o in sub.output)}):")
                    nodes(sub, indent + "    ")

    print(f"# {case_name} opset {opset}: {len(g.node)} nodes, "
          f"ops {dict(sorted(Counter(n.op_type for n in g.node).items()))}")
    for i in g.input:
        print(f"input {i.name}: {shapes[i.name]}")
    nodes(g, "")
    for o in g.output:
        print(f"output {o.name}: {shapes[o.name]}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list")
    e = sub.add_parser("export")
    e.add_argument("name", choices=sorted(MODELS))
    e.add_argument("out")
    e.add_argument("--opset", type=int, default=17)
    sub.add_parser("check")
    d = sub.add_parser("dump")
    d.add_argument("name", choices=sorted(MODELS))
    d.add_argument("--opset", type=int, default=17)
    a = p.parse_args(argv)
    if a.cmd == "list":
        for name in MODELS:
            print(name)
        return 0
    if a.cmd == "export":
        export(a.name, a.out, a.opset)
        return 0
    if a.cmd == "dump":
        dump(a.name, a.opset)
        return 0
    return check()


if __name__ == "__main__":
    sys.exit(main())
