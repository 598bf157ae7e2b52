"""Encoders exported from Hugging Face `transformers`' own code (../shared/hf-onnx: random weights,
opset 17, with torch's outputs for each sequence run alone). Each model is compiled straight from
ONNX for two buckets; the ones kime imports run every case packed among the others (in the large
bucket) and alone (in the small one), each output within 1e-4 of torch's. The ones it does not
import yet are refused naming the ONNX node, as IMPORTS below says: a family that starts (or stops)
importing fails here until the table says so."""
import json
import pathlib

import numpy as np
import pytest

import kime
import kime.compiler

HF = pathlib.Path(__file__).resolve().parents[3] / "shared" / "hf-onnx"
# The families kime imports, each with its outputs' shapes (per marker or per sequence, width).
HEADS = {"token_logits": ("per-marker", 5), "logits": ("per-sequence", 3)}
IMPORTS = {"bert": HEADS, "distilbert": HEADS, "roberta": HEADS, "esm-rotary": HEADS,
           "minilm-embed": {"embedding": ("per-sequence", 64)}}
BUCKETS = {"stages": {"serve": [{"tokens": 64, "seqs": 1, "markers": 64},
                                {"tokens": 512, "seqs": 8, "markers": 512}]}}


def _models():
    if not (HF / "index.json").exists():
        pytest.skip(f"no {HF} (the hf-onnx fixtures beside the checkout)")
    return sorted(json.loads((HF / "index.json").read_text())["models"])


@pytest.fixture(scope="module")
def buckets(tmp_path_factory):
    path = tmp_path_factory.mktemp("hf") / "buckets.json"
    path.write_text(json.dumps(BUCKETS))
    return path


def _compile(name, buckets):
    return kime.compiler.compile(str(HF / f"{name}.onnx"), None, str(buckets), targets=["x86-64-avx2"],
                                 cuda_archs=[], jobs=2)


def _packed(cases):
    """The cases as one packed batch, a marker at every token (a tagger reads them all)."""
    lens = [len(c["ids"]) for c in cases]
    cu = np.concatenate([[0], np.cumsum(lens)]).astype(np.uint32)
    ids = np.array([t for c in cases for t in c["ids"]], np.uint32)
    markers = np.array([i for n in lens for i in range(n)], np.uint32)
    qtype = np.array([c.get("token_type", 0) for c in cases], np.uint8)
    return ids, cu, markers, cu.copy(), qtype


def _check(outputs, cases, shapes):
    assert sorted(outputs) == sorted(shapes)
    worst = 0.0
    for name, (kind, width) in shapes.items():
        got = outputs[name]
        want = np.concatenate([np.asarray(c["outputs"][name], np.float64).reshape(-1, width) for c in cases])
        assert got.shape == want.shape, name
        assert np.max(np.abs(want)) > 1e-2  # outputs that a wrong sign or scale would miss
        worst = max(worst, float(np.max(np.abs(got - want))))
    assert worst <= 1e-4, f"largest difference from torch {worst:.3g}"
    return worst


@pytest.mark.parametrize("name", sorted(IMPORTS))
def test_an_imported_family_matches_torch_packed_and_alone(name, buckets):
    fixture = json.loads((HF / f"{name}.cases.json").read_text())
    model = kime.Model.from_bytes(_compile(name, buckets))
    shapes = IMPORTS[name]
    assert model.outputs == [(n, kind, width) for n, (kind, width) in shapes.items()]
    executor = model.executor(threads=2)
    cases = fixture["cases"]
    _check(executor.run(*_packed(cases)), cases, shapes)
    for case in cases:
        _check(executor.run(*_packed([case])), [case], shapes)


def test_a_sequence_with_the_padding_id_is_refused_by_position(buckets):
    """RoBERTa's positions count the tokens that are not its padding id (1): a batch holding it is
    refused, naming the sequence and the token, never run with other positions than HF's."""
    model = kime.Model.from_bytes(_compile("roberta", buckets))
    case = {"ids": [5, 6, 7], "token_type": 0}
    bad = {"ids": [5, 6, 1, 7], "token_type": 0}
    with pytest.raises(kime.BadBatch, match="sequence 1, token 2: id 1 is the model's padding id"):
        model.executor().run(*_packed([case, bad]))


def test_the_families_not_imported_yet_are_refused_naming_the_node(buckets):
    for name in _models():
        if name in IMPORTS:
            continue
        with pytest.raises(kime.CompileError, match=r"node '[^']+' \(") as refused:
            _compile(name, buckets)
        print(f"{name}: {refused.value}")


def test_a_padded_int64_batch_runs_as_a_tokenizer_gives_it(buckets):
    """executor(input_ids=, attention_mask=, token_type_ids=) with int64 [B, L] arrays, padded on the
    right as tokenizers pad: per-token outputs come back [B, L, 5] (zeros at padding), per-sequence
    ones [B, 3], each as torch's for the sequence alone."""
    fixture = json.loads((HF / "bert.cases.json").read_text())
    cases = fixture["cases"][:4]
    L = max(len(c["ids"]) for c in cases)
    ids = np.zeros((len(cases), L), np.int64)
    mask = np.zeros_like(ids)
    types = np.zeros_like(ids)
    for b, c in enumerate(cases):
        ids[b, :len(c["ids"])], mask[b, :len(c["ids"])], types[b, :len(c["ids"])] = c["ids"], 1, c.get("token_type", 0)
    executor = kime.Model.from_bytes(_compile("bert", buckets)).executor()
    out = executor(input_ids=ids, attention_mask=mask, token_type_ids=types)
    assert out["token_logits"].shape == (len(cases), L, 5) and out["logits"].shape == (len(cases), 3)
    for b, c in enumerate(cases):
        n = len(c["ids"])
        assert np.abs(out["token_logits"][b, :n] - np.asarray(c["outputs"]["token_logits"])).max() <= 1e-4
        assert not out["token_logits"][b, n:].any()
        assert np.abs(out["logits"][b] - np.asarray(c["outputs"]["logits"])).max() <= 1e-4
    with pytest.raises(ValueError, match="attention_mask row 1: not 1s then 0s"):
        executor(input_ids=ids, attention_mask=mask[:, ::-1].copy())
    with pytest.raises(ValueError, match="ids\\[3\\]: -5 does not fit uint32"):
        executor.run(np.array([1, 2, 3, -5], np.int64), np.array([0, 4], np.int64))
