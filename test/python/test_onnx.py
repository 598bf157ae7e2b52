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


def test_the_frameworks_outputs_check_the_import_and_become_the_self_test(tmp_path, kime_bin):
    import subprocess

    import kime.onnx

    case = torch_models.MODELS["bert_post_ln"]
    model = case.build().eval()
    onnx = tmp_path / "bert.onnx"
    kime.onnx.export(model, str(onnx), case.inputs, 17)
    batches = [[([5, 9, 1, 33], [0, 3], 2), ([7], [0], 0)], [([2, 2, 8, 60, 61, 3, 4], [6, 1], 1)]]
    expected = tmp_path / "expected.json"
    kime.onnx.expected_outputs(model, batches, str(expected), case.inputs)
    graph, weights = tmp_path / "graph.json", tmp_path / "model.safetensors"
    r = subprocess.run([kime_bin / "kime-import", onnx, "-o", graph, "--weights-out", weights, "--expect", expected],
                       capture_output=True, text=True, check=True)
    assert "2 expected cases, kime's reference within" in r.stderr
    buckets = tmp_path / "buckets.json"
    buckets.write_text(__import__("json").dumps(BUCKETS))
    artifact = tmp_path / "bert.kime"
    kime.compiler.compile(str(graph), str(weights), str(buckets), output=str(artifact), targets=["x86-64-avx2"],
                          cuda_archs=[], selftest_from=str(expected))
    report = kime.Model(str(artifact)).selftest()
    assert report["passed"] and sum(b["batches"] for b in report["buckets"]) == 2
    # A wrong expectation is caught at import, and nothing is written.
    doc = __import__("json").loads(expected.read_text())
    doc["cases"][0]["act"][0][0] += 0.5
    expected.write_text(__import__("json").dumps(doc))
    graph.unlink()
    r = subprocess.run([kime_bin / "kime-import", onnx, "-o", graph, "--weights-out", weights, "--expect", expected],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "misses the expected outputs: case \"batch 0\": act[0][0] is" in r.stderr
    assert not graph.exists()


def test_weights_stored_beside_the_model_load_and_stay_inside_its_folder(tmp_path, kime_bin):
    import subprocess

    import onnx

    plain = tmp_path / "plain.onnx"
    torch_models.export("kime_family", str(plain), 17)
    split = tmp_path / "split"
    split.mkdir()
    m = onnx.load(str(plain))
    onnx.save_model(m, str(split / "model.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
                    location="weights.bin", size_threshold=0)
    assert (split / "weights.bin").stat().st_size > 50_000  # the weights are there, not in the model

    def imported(model, name):
        r = subprocess.run([kime_bin / "kime-import", model, "-o", tmp_path / f"{name}.json", "--weights-out",
                            tmp_path / f"{name}.safetensors"], capture_output=True, text=True)
        return r, tmp_path / f"{name}.json", tmp_path / f"{name}.safetensors"

    _, g1, w1 = imported(plain, "a")
    r, g2, w2 = imported(split / "model.onnx", "b")
    assert r.returncode == 0, r.stderr
    assert g1.read_bytes() == g2.read_bytes() and w1.read_bytes() == w2.read_bytes()
    # An external location outside the model's folder is refused by name.
    for t in m.graph.initializer:
        if t.data_location == onnx.TensorProto.EXTERNAL:
            for e in t.external_data:
                if e.key == "location":
                    e.value = "../plain.onnx"
    onnx.save_model(m, str(split / "escape.onnx"))
    r, g3, _ = imported(split / "escape.onnx", "c")
    assert r.returncode == 1 and "is not a file in the model's folder" in r.stderr and not g3.exists()


def test_the_readme_classifier_answers_as_torch_does(tmp_path):
    """examples/pytorch/classifier.py (the README's quick start: an HF-style classifier of 3 labels,
    exported by plain torch.onnx.export): compiled from ONNX, a padded int64 batch through
    executor(**inputs) gives torch's logits [B, 3]."""
    import importlib.util
    import subprocess
    import torch

    example = pathlib.Path(__file__).resolve().parents[2] / "examples" / "pytorch" / "classifier.py"
    onnx = tmp_path / "classifier.onnx"
    subprocess.run([sys.executable, "-W", "ignore", str(example), str(onnx)], check=True, capture_output=True)
    buckets = tmp_path / "buckets.json"
    buckets.write_text(__import__("json").dumps(BUCKETS))
    executor = kime.Model.from_bytes(kime.compiler.compile(str(onnx), None, str(buckets), targets=["x86-64-avx2"],
                                                           cuda_archs=[], jobs=2)).executor()
    spec = importlib.util.spec_from_file_location("classifier", example)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.manual_seed(0)
    model = module.Classifier().eval()
    ids = torch.tensor([[5, 9, 1, 33, 8, 7], [7, 2, 0, 0, 0, 0]])
    mask = (torch.arange(6)[None] < torch.tensor([[6], [2]])).long()
    types = torch.tensor([[1] * 6, [2] * 6]) * mask
    with torch.no_grad():
        want = np.concatenate([model(ids[b:b + 1, :n], mask[b:b + 1, :n], types[b:b + 1, :n]).numpy()
                               for b, n in enumerate((6, 2))])
    got = executor(input_ids=ids.numpy(), attention_mask=mask.numpy(), token_type_ids=types.numpy())
    assert got["logits"].shape == (2, 3) and np.abs(got["logits"] - want).max() <= 1e-4
    assert np.abs(want).max() > 1e-2


def test_sentence_pairs_read_a_type_per_token(tmp_path):
    """A BERT that reads token_type_ids (test/onnx's bert_post_ln): sequences whose types change
    inside them (a first text of type 0, a second of type 1), packed, give torch's outputs for each
    pair alone; the same sequences with each one type would not."""
    import torch

    onnx = tmp_path / "bert.onnx"
    torch_models.export("bert_post_ln", str(onnx), 17)
    buckets = tmp_path / "buckets.json"
    buckets.write_text(__import__("json").dumps(BUCKETS))
    exe = kime.Model.from_bytes(kime.compiler.compile(str(onnx), None, str(buckets), targets=["x86-64-avx2"],
                                                      cuda_archs=[], jobs=2)).executor()
    model = torch_models.MODELS["bert_post_ln"].build().eval()
    pairs = [([5, 9, 1, 33, 8], [0, 0, 0, 1, 1]), ([7, 2, 4], [0, 1, 1])]
    ids = np.array([t for p in pairs for t in p[0]], np.int64)
    types = np.array([t for p in pairs for t in p[1]], np.int64)
    cu = np.array([0, 5, 8])
    got = exe.run(ids, cu, None, None, None, types)
    with torch.no_grad():
        want = [model(torch.tensor([p[0]]), torch.ones(1, len(p[0]), dtype=torch.long), torch.tensor([p[1]]))
                for p in pairs]
    want_logits = np.concatenate([w[0].reshape(-1).numpy() for w in want])
    want_act = np.concatenate([w[1].numpy() for w in want])
    logits, act = got if isinstance(got, tuple) else (got["logits"], got["act"])
    assert np.abs(logits - want_logits).max() <= 1e-4 and np.abs(act - want_act).max() <= 1e-4
    one_type = exe.run(ids, cu, None, None, None, None)  # every token its sequence's qtype 0
    assert np.abs((one_type[0] if isinstance(one_type, tuple) else one_type["logits"]) - want_logits).max() > 1e-3
    with pytest.raises(kime.BadBatch, match="3 token types for 8 tokens"):
        exe.run(ids, cu, None, None, None, types[:3])
