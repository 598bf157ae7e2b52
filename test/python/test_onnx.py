"""kime.compiler.import_onnx and a compile straight from ONNX (a model of test/onnx's zoo, exported
by Debian's python3-torch), checked against torch on one batch; a refused model raises with the
node's name and writes nothing."""
import pathlib
import sys

import numpy as np
import pytest

import kime
import kime.compiler

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "onnx"))
torch_models = pytest.importorskip("torch_models", reason="needs PyTorch (Debian's python3-torch)")

BUCKETS = {"stages": {"serve": [{"tokens": 32, "seqs": 4, "markers": 8}]}}


def test_an_imported_model_runs_as_torch_computes_it(tmp_path):
    onnx = tmp_path / "model.onnx"
    torch_models.export("kime_family", str(onnx), 17)
    sizes = kime.compiler.import_onnx(str(onnx), str(tmp_path / "graph.json"), str(tmp_path / "model.safetensors"))
    assert sizes["vocab"] == torch_models.VOCAB and sizes["types"] == torch_models.TYPES and sizes["nodes"] > 20
    buckets = tmp_path / "buckets.json"
    buckets.write_text(__import__("json").dumps(BUCKETS))
    data = kime.compiler.compile(str(onnx), None, str(buckets), targets=["x86-64-avx2"], cuda_archs=[], jobs=2)
    seqs = [([5, 9, 1, 33], [0, 3], 2), ([7], [0], 0), ([2, 2, 8, 60, 61, 3, 4], [6], 3)]
    ids = np.array([t for s in seqs for t in s[0]], np.uint32)
    cu = np.array([0, 4, 5, 12], np.uint32)
    markers = np.array([m for s in seqs for m in s[1]], np.uint32)
    mcu = np.array([0, 2, 3, 4], np.uint32)
    qtype = np.array([s[2] for s in seqs], np.uint8)
    logits, act = kime.Model.from_bytes(data).executor().run(ids, cu, markers, mcu, qtype)
    want_logits, want_act = torch_models.torch_outputs("kime_family", torch_models.MODELS["kime_family"].build().eval(),
                                                       seqs)
    assert np.allclose(logits, want_logits, atol=1e-4) and np.allclose(act, want_act, atol=1e-4)
    assert np.max(np.abs(want_logits)) > 1e-2  # outputs that a wrong sign or scale would miss


def test_a_refused_model_names_its_node_and_writes_nothing(tmp_path):
    onnx = tmp_path / "conv.onnx"
    torch_models.export("refuse_conv", str(onnx), 17)
    with pytest.raises(kime.CompileError, match=r"node '/conv/Conv' \(Conv\): Conv is not an encoder op"):
        kime.compiler.import_onnx(str(onnx), str(tmp_path / "g.json"), str(tmp_path / "w.safetensors"))
    assert not (tmp_path / "g.json").exists() and not (tmp_path / "w.safetensors").exists()
    with pytest.raises(kime.CompileError, match="give weights=None"):
        kime.compiler.compile(str(onnx), "w.safetensors", "b.json")
