#!/usr/bin/env python3
"""A small encoder as one would write it in PyTorch (BERT-like: learned positions, post-norm
nn.TransformerEncoder layers with GELU, a question-type embedding, a logit per token and an act
pair from the first token), exported to ONNX for kime:

    PYTHONPATH=build/python /usr/bin/python3 examples/pytorch/encoder.py model.onnx
    build/bin/kime-compile model.onnx --buckets examples/small/buckets.json -o model.kime
    build/bin/kime-run model.kime examples/small/batch.json

Its widths fit examples/small (a vocabulary of 4096, 4 question types). The weights are random
(seeded): train it first for real use."""
import sys

import torch
from torch import nn

import kime.onnx


class Encoder(nn.Module):
    def __init__(self, vocab=4096, types=4, hidden=128, heads=4, ffn=512, layers=2, positions=512):
        super().__init__()
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(positions, hidden)
        self.types = nn.Embedding(types, hidden)
        self.norm = nn.LayerNorm(hidden)
        layer = nn.TransformerEncoderLayer(hidden, heads, ffn, dropout=0.1, activation="gelu", batch_first=True)
        self.layers = nn.TransformerEncoder(layer, layers)
        self.marker = nn.Linear(hidden, 1)
        self.act = nn.Linear(hidden, 2)

    def forward(self, input_ids, attention_mask, qtype):
        positions = torch.arange(input_ids.shape[1])
        x = self.tok(input_ids) + self.pos(positions)[None] + self.types(qtype)[:, None]
        x = self.layers(self.norm(x), src_key_padding_mask=attention_mask == 0)
        return self.marker(x), self.act(x[:, 0])


if __name__ == "__main__":
    torch.manual_seed(0)
    kime.onnx.export(Encoder().eval(), sys.argv[1] if len(sys.argv) > 1 else "model.onnx",
                     inputs=("input_ids", "attention_mask", "qtype"))
