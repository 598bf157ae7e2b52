"""PyTorch models into kime: exported to ONNX as kime-import takes them, and their own outputs
kept as a self-test (docs/onnx.md). Needs PyTorch (imported when called).

    import kime.onnx
    kime.onnx.export(model, "model.onnx", inputs=("input_ids", "attention_mask"))
    kime.onnx.expected_outputs(model, [batch, ...], "expected.json", inputs=(...))
    # kime-import model.onnx -o graph.json --weights-out model.safetensors --expect expected.json
    # kime-compile graph.json --weights model.safetensors --buckets b.json --selftest-from expected.json

A sequence is (ids, markers, qtype): its token ids, the positions in it whose logits are read,
and its question type. A batch is a list of sequences. The model takes the padded batch (pad id
0, attention_mask 0 on padding) by the names in `inputs` (input_ids, attention_mask, a [B] qtype,
token_type_ids) and returns (per-token logits [B, L] or [B, L, 1], act [B, 2]).
"""
import json
from typing import Dict, List, Sequence, Tuple

import numpy as np

Sequence_ = Tuple[List[int], List[int], int]
OUTPUTS = ("logits", "act")


def padded(batch: Sequence[Sequence_], inputs: Sequence[str]) -> Dict[str, np.ndarray]:
    """The padded int64 arrays of a batch by input name; token_type_ids carry each sequence's
    qtype on its tokens."""
    B, L = len(batch), max((len(s[0]) for s in batch), default=0)
    table = {"input_ids": np.zeros((B, L), np.int64), "attention_mask": np.zeros((B, L), np.int64),
             "token_type_ids": np.zeros((B, L), np.int64), "qtype": np.zeros((B,), np.int64)}
    for b, (ids, _, q) in enumerate(batch):
        n = len(ids)
        table["input_ids"][b, :n] = ids
        table["attention_mask"][b, :n] = 1
        table["token_type_ids"][b, :n] = q
        table["qtype"][b] = q
    return {name: table[name] for name in inputs}


def torch_outputs(model, batch: Sequence[Sequence_], inputs: Sequence[str]):
    """The model's (logits at each sequence's markers [M], act [S, 2]) on the padded batch, as
    float64 arrays of its float32 results."""
    import torch

    for ids, markers, _ in batch:
        if not ids or any(not 0 <= m < len(ids) for m in markers):
            raise ValueError("a sequence must have tokens and its markers inside it")
    feeds = padded(batch, inputs)
    with torch.no_grad():
        logits, act = model(*(torch.from_numpy(feeds[n]) for n in inputs))
    B, L = feeds[inputs[0]].shape[0], max(len(s[0]) for s in batch)
    logits = logits.detach().reshape(B, L).numpy().astype(np.float64)
    act = act.detach().numpy().astype(np.float64).reshape(B, 2)
    return np.concatenate([logits[b, np.asarray(s[1], np.int64)] for b, s in enumerate(batch)]), act


def expected_outputs(model, batches: Sequence[Sequence[Sequence_]], path: str, inputs: Sequence[str]) -> None:
    """Writes the model's outputs on each batch as kime's expected outputs (kime-import --expect,
    kime-compile --selftest-from)."""
    cases = []
    for k, batch in enumerate(batches):
        logits, act = torch_outputs(model, batch, inputs)
        cu = np.cumsum([0] + [len(s[0]) for s in batch]).tolist()
        mcu = np.cumsum([0] + [len(s[1]) for s in batch]).tolist()
        cases.append({"name": f"batch {k}",
                      "batch": {"ids": [int(t) for s in batch for t in s[0]], "cu": cu,
                                "markers": [int(m) for s in batch for m in s[1]], "mcu": mcu,
                                "qtype": [int(s[2]) for s in batch]},
                      "logits": logits.tolist(), "act": act.tolist()})
    with open(path, "w") as f:
        json.dump({"made_by": "kime.onnx.expected_outputs", "cases": cases}, f)


def _repeat_interleave(g, self, repeats, dim=None, output_size=None):
    """aten::repeat_interleave(x, r: int, dim) as Unsqueeze, Expand, Reshape. torch 1.13's own
    export is wrong where a dynamic dim follows `dim` (its Reshape copies dims by position: x
    [B, 2, L, 8] repeated on dim 1 comes out [B, 2L, 2, 8]), and onnx.checker passes it."""
    import torch
    from torch.onnx import symbolic_helper as sh
    from torch.onnx import symbolic_opset13

    reps = sh._maybe_get_const(repeats, "i")
    d = None if sh._is_none(dim) else sh._maybe_get_const(dim, "i")
    rank = sh._get_tensor_rank(self)
    if not isinstance(reps, int) or not isinstance(d, int) or rank is None:
        return symbolic_opset13.repeat_interleave(g, self, repeats, dim, output_size)
    d %= rank

    def const(v):
        return g.op("Constant", value_t=torch.tensor(v, dtype=torch.int64))

    tile = [1] * (rank + 1)
    tile[d + 1] = reps
    x = g.op("Expand", g.op("Unsqueeze", self, const([d + 1])), const(tile))
    shape = g.op("Shape", self)
    parts = ([g.op("Slice", shape, const([0]), const([d]))] if d > 0 else []) + [const([-1])]
    if d + 1 < rank:
        parts.append(g.op("Slice", shape, const([d + 1]), const([rank])))
    return g.op("Reshape", x, g.op("Concat", *parts, axis_i=0))


def export(model, path: str, inputs: Sequence[str] = ("input_ids", "attention_mask"), opset: int = 17,
           example: Sequence[Sequence_] = None) -> None:
    """Exports `model` to ONNX as kime-import takes it: inputs and outputs by kime's names, the
    batch and length dynamic ("B", "L"), constants folded. Tracing runs with grad enabled, since
    under no_grad nn.TransformerEncoder takes a fused path that has no ONNX form."""
    import torch

    # Token ids 0 and 1 and type 0, which every model's tables hold.
    example = example or [([1, 0, 1, 1, 0, 1, 0], [], 0), ([0, 1, 1, 0], [], 0), ([1, 1, 0, 1, 0, 0], [], 0)]
    feeds = padded(example, inputs)
    axes = {n: ({0: "B"} if n == "qtype" else {0: "B", 1: "L"}) for n in inputs}
    axes.update({"logits": {0: "B", 1: "L"}, "act": {0: "B"}})
    old = tuple(int(v) for v in torch.__version__.split(".")[:2]) < (2, 0)
    if old:
        torch.onnx.register_custom_op_symbolic("aten::repeat_interleave", _repeat_interleave, opset)
    try:
        with torch.enable_grad():
            torch.onnx.export(model.eval(), tuple(torch.from_numpy(feeds[n]) for n in inputs), path,
                              input_names=list(inputs), output_names=list(OUTPUTS), dynamic_axes=axes,
                              opset_version=opset, do_constant_folding=True)
    finally:
        if old:
            torch.onnx.unregister_custom_op_symbolic("aten::repeat_interleave", opset)
