"""ONNX Runtime's own int8 path on a bench case, the peer of kime's int8 linears (issue #26):
    KIME_PEERS=DIR /usr/bin/python3 bench/onnx_int8.py CASEDIR OUTDIR
reads CASEDIR/model.onnx (the peers' export_onnx.py wrote it) and writes OUTDIR/model.onnx and
OUTDIR/config.json, so that the peers' bench_ort.js times it as a case of its own. Every MatMul by
a weight of more than 16 outputs (not the heads, as in kime: compiler/quant/Int8.h) becomes
DynamicQuantizeLinear (ORT's per-tensor u8 activations) + MatMulInteger + Cast + Mul by the
scales, the pattern ORT fuses into its int8 GEMM (MLAS, VNNI where the CPU has it). The weights
are quantized as kime quantizes them: symmetric per output channel, round half to even, within
[-127, 127]. Then the case's batches run through ORT (the peers' ort_run.js) and its error against
the case's f64 expectations is printed, batch by batch; exits 1 where the error is more than 10%
of the largest output (a broken rewrite, not quantization)."""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HEAD_OUTPUTS = 16  # linears of at most this many outputs are heads: they stay f32


def quantize_columns(w):
    """w [K, N] f32 -> (q int8 [K, N], scale f32 [N]), kime's rule for each output channel."""
    scale = (np.abs(w).max(axis=0) / np.float32(127)).astype(np.float32)
    safe = np.where(scale > 0, scale, np.float32(1))
    q = np.clip(np.round(w / safe), -127, 127).astype(np.int8)
    return q, scale


def rewrite(model):
    """Replaces the weight MatMuls in place; returns how many."""
    graph = model.graph
    inits = {i.name: i for i in graph.initializer}
    quantized_inputs = {}  # activation name -> (q, scale, zero point): one DynamicQuantizeLinear each
    nodes, count = [], 0
    for n in graph.node:
        w = inits.get(n.input[1]) if n.op_type == "MatMul" and len(n.input) == 2 else None
        if w is None or len(w.dims) != 2 or w.dims[1] <= HEAD_OUTPUTS:
            nodes.append(n)
            continue
        count += 1
        q, scale = quantize_columns(numpy_helper.to_array(w).astype(np.float32))
        base = n.output[0]
        graph.initializer.extend([numpy_helper.from_array(q, w.name + ".int8"),
                                  numpy_helper.from_array(scale, w.name + ".scale")])
        a = n.input[0]
        if a not in quantized_inputs:
            quantized_inputs[a] = (a + ".u8", a + ".scale", a + ".zero")
            nodes.append(helper.make_node("DynamicQuantizeLinear", [a], list(quantized_inputs[a])))
        aq, ascale, azero = quantized_inputs[a]
        nodes += [
            helper.make_node("MatMulInteger", [aq, w.name + ".int8", azero], [base + ".i32"]),
            helper.make_node("Cast", [base + ".i32"], [base + ".f32"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [ascale, w.name + ".scale"], [base + ".scales"]),
            helper.make_node("Mul", [base + ".f32", base + ".scales"], [base]),
        ]
    del graph.node[:]
    graph.node.extend(nodes)
    used = {i for n in graph.node for i in n.input}
    kept = [i for i in graph.initializer if i.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    return count


def check(peers, case, onnx_path):
    """ORT int8's error on the case's batches against their f64 expectations; True if sane."""
    sys.path.insert(0, peers)
    import torch
    from kime_padded import gather_markers, pad_batch
    files = [f for f in sorted(glob.glob(f"{case}/batch_*.json"))
             if (lambda cu: len(cu) > 1 and all(b > a for a, b in zip(cu, cu[1:])))(json.load(open(f))["cu"])]
    batches = [json.load(open(f)) for f in files]
    expects = [json.load(open(f.replace("batch_", "expect_"))) for f in files]
    padded = [pad_batch(b) for b in batches]
    with tempfile.TemporaryDirectory() as tmp:
        feeds = [{"S": i.shape[0], "L": i.shape[1], "input_ids": i.flatten().tolist(),
                  "attention_mask": m.flatten().tolist(), "qtype": q.tolist()} for i, m, q in padded]
        json.dump(feeds, open(f"{tmp}/in.json", "w"))
        subprocess.run(["node", os.path.join(peers, "ort_run.js"), onnx_path, f"{tmp}/in.json", f"{tmp}/out.json"],
                       check=True, cwd=peers)
        outs = json.load(open(f"{tmp}/out.json"))
    sane = True
    print("| batch | S x L | largest output | ORT int8 error, logits | act |")
    print("| --- | --- | --- | --- | --- |")
    for k, (b, e, (ids, _, _), o) in enumerate(zip(batches, expects, padded, outs)):
        S, L = ids.shape
        logits = gather_markers(torch.tensor(o["token_logits"]).view(S, L), b).double().flatten()
        act = torch.tensor(o["act"]).view(S, 2).double().flatten()
        want_l = torch.tensor(e["logits"], dtype=torch.float64).flatten()
        want_a = torch.tensor(e["act"], dtype=torch.float64).flatten()
        largest = max(want_l.abs().max().item() if want_l.numel() else 0, want_a.abs().max().item())
        el = (logits - want_l).abs().max().item() if want_l.numel() else 0.0
        ea = (act - want_a).abs().max().item()
        sane = sane and max(el, ea) <= 0.1 * largest
        print(f"| {files[k].split('/')[-1]} | {S} x {L} | {largest:.3g} | {el:.3g} | {ea:.3g} |")
    return sane


def main():
    if len(sys.argv) != 3 or not os.environ.get("KIME_PEERS"):
        sys.exit(__doc__)
    case, out = sys.argv[1], sys.argv[2]
    peers = os.path.abspath(os.environ["KIME_PEERS"])
    model = onnx.load(f"{case}/model.onnx")
    count = rewrite(model)
    os.makedirs(out, exist_ok=True)
    onnx.save(model, f"{out}/model.onnx")
    shutil.copy(f"{case}/config.json", f"{out}/config.json")
    print(f"wrote {out}/model.onnx: {count} MatMuls in int8 "
          f"({os.path.getsize(f'{out}/model.onnx') / 2**20:.1f} MiB, f32 "
          f"{os.path.getsize(f'{case}/model.onnx') / 2**20:.1f} MiB)")
    sys.exit(0 if check(peers, os.path.abspath(case), os.path.abspath(f"{out}/model.onnx")) else 1)


if __name__ == "__main__":
    main()
