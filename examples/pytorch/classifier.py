#!/usr/bin/env python3
"""A sentence classifier as Hugging Face's BERT-style models are written (an NLI head of 3 labels:
word, position and token-type embeddings with the types from a buffer of zeros when none are
given, post-norm layers, a tanh pooler on the first token, a classifier), exported to ONNX the way
`torch.onnx.export` is called for such models, and run by kime:

    PYTHONPATH=build/python /usr/bin/python3 examples/pytorch/classifier.py classifier.onnx
    build/bin/kime-compile classifier.onnx --buckets examples/small/buckets.json -o classifier.kime
    build/bin/kime-run classifier.kime examples/small/batch.json      # {"bucket": ..., "logits": [[3 per sequence]]}

Its widths fit examples/small (a vocabulary of 4096, 4 token types, sequences up to 512 tokens).
The weights are random (seeded): train it first for real use."""
import sys

import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self, vocab=4096, types=4, hidden=128, heads=4, ffn=512, layers=2, positions=512, labels=3):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.position = nn.Embedding(positions, hidden)
        self.token_type = nn.Embedding(types, hidden)
        self.register_buffer("position_ids", torch.arange(positions)[None])
        self.norm = nn.LayerNorm(hidden, eps=1e-12)
        layer = nn.TransformerEncoderLayer(hidden, heads, ffn, dropout=0.1, activation="gelu", batch_first=True)
        self.layers = nn.TransformerEncoder(layer, layers)
        self.pooler = nn.Linear(hidden, hidden)
        self.classifier = nn.Linear(hidden, labels)

    def forward(self, input_ids, attention_mask, token_type_ids):
        L = input_ids.shape[1]
        x = self.word(input_ids) + self.position(self.position_ids[:, :L]) + self.token_type(token_type_ids)
        x = self.layers(self.norm(x), src_key_padding_mask=attention_mask == 0)
        return self.classifier(torch.tanh(self.pooler(x[:, 0])))


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Classifier().eval()
    ids = torch.randint(1, 4096, (2, 7))
    inputs = (ids, torch.ones_like(ids), torch.zeros_like(ids))
    axes = {name: {0: "B", 1: "L"} for name in ("input_ids", "attention_mask", "token_type_ids")}
    with torch.enable_grad():  # nn.TransformerEncoder's fused fast path has no ONNX form
        torch.onnx.export(model, inputs, sys.argv[1] if len(sys.argv) > 1 else "classifier.onnx",
                          input_names=list(axes), output_names=["logits"], dynamic_axes={**axes, "logits": {0: "B"}},
                          opset_version=17, do_constant_folding=True)
