"""kime's runtime from Python: outputs, errors, zero-copy inputs, threads."""
import json
import os
import subprocess
import threading

import numpy as np
import pytest

import kime
from conftest import BUCKETS


def arrays(batch):
    return (np.array(batch["ids"], np.uint32), np.array(batch["cu"], np.uint32), np.array(batch["markers"], np.uint32),
            np.array(batch["mcu"], np.uint32), np.array(batch["qtype"], np.uint8))


def test_outputs_equal_kime_run_bit_for_bit(golden, kime_bin):
    exe = kime.Model(str(golden["artifact"])).executor(threads=2)
    for path, batch in golden["batches"]:
        logits, act = exe.run(*arrays(batch))
        want = json.loads(subprocess.run([kime_bin / "kime-run", golden["artifact"], path, "--threads", "2"],
                                         check=True, capture_output=True, text=True).stdout)
        assert logits.dtype == np.float32 and act.dtype == np.float32
        assert act.shape == (len(batch["cu"]) - 1, 2)
        assert np.array_equal(logits, np.array(want["logits"], np.float32)), path
        assert np.array_equal(act, np.array(want["act"], np.float32).reshape(-1, 2)), path


def test_lists_give_the_same_outputs_as_arrays(golden):
    exe = kime.Model(str(golden["artifact"])).executor()
    _, batch = golden["batches"][0]
    a = exe.run(*arrays(batch))
    b = exe.run(batch["ids"], batch["cu"], batch["markers"], batch["mcu"], batch["qtype"])
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_a_model_from_bytes_runs_as_from_its_file(golden):
    data = golden["artifact"].read_bytes()
    m = kime.Model.from_bytes(data)
    del data
    _, batch = golden["batches"][1]
    got = m.executor().run(*arrays(batch))
    want = kime.Model(str(golden["artifact"])).executor().run(*arrays(batch))
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_model_properties(golden):
    m = kime.Model(str(golden["artifact"]))
    assert m.stages == ["serve", "bulk"] or set(m.stages) >= {"serve"}
    assert m.default_stage in m.stages
    assert all(len(b) == 3 and b[0] > 0 for b in m.buckets(m.default_stage))
    assert m.cpu_target == "x86-64-avx2"
    assert "arena" in m.inspect()
    exe = m.executor(threads=1)
    assert exe.caps()["name"] == "cpu" and exe.caps()["threads"] == 1
    assert exe.stage == m.default_stage and "x86-64-avx2" in exe.device


def test_selftest_passes(golden):
    report = kime.Model(str(golden["artifact"])).selftest()
    assert report["passed"], report["text"]
    assert sum(b["batches"] for b in report["buckets"]) == 3


def test_a_bad_batch_raises_bad_batch(golden):
    exe = kime.Model(str(golden["artifact"])).executor()
    with pytest.raises(kime.BadBatch, match="cu and mcu must start at 0") as e:
        exe.run([1, 2], [1, 2], [], [0, 0], [0])
    assert isinstance(e.value, ValueError) and isinstance(e.value, kime.Error)
    assert exe.stats()["bad_batches"] == 1


def test_a_batch_no_bucket_holds_raises_no_bucket(golden):
    m = kime.Model(str(golden["artifact"]))
    exe = m.executor()
    largest = max(m.buckets(exe.stage))
    s = largest[1] + 1  # one sequence more than any bucket holds, a token each
    with pytest.raises(kime.NoBucket, match="no " + exe.stage + " bucket holds") as e:
        exe.run(np.ones(s, np.uint32), np.arange(s + 1, dtype=np.uint32), [], np.zeros(s + 1, np.uint32),
                np.zeros(s, np.uint8))
    assert isinstance(e.value, ValueError)
    assert e.value.stage == exe.stage and e.value.seqs == s and e.value.largest == largest
    assert exe.stats()["no_bucket"] == 1


def test_a_damaged_artifact_raises_bad_artifact(golden, tmp_path):
    damaged = tmp_path / "damaged.kime"
    damaged.write_bytes(golden["artifact"].read_bytes()[:4096])
    with pytest.raises(kime.BadArtifact, match="damaged.kime"):
        kime.Model(str(damaged))
    with pytest.raises(kime.BadArtifact, match="no stage"):
        kime.Model(str(golden["artifact"])).executor(stage="nonexistent")


def test_trusted_keys_load_only_what_they_signed(golden, kime_bin, tmp_path):
    import kime.compiler

    for name in ("build", "other"):
        subprocess.run([kime_bin / "kime-keygen", "-o", tmp_path / name], check=True, capture_output=True)
    trusted, other = (tmp_path / "build.pub").read_text(), (tmp_path / "other.pub").read_text()
    data = kime.compiler.compile(str(golden["graph"]), str(golden["weights"]), str(BUCKETS), targets=["x86-64-avx2"],
                                 cuda_archs=[], sign_key=str(tmp_path / "build.key"))
    signed = tmp_path / "signed.kime"
    signed.write_bytes(data)
    _, batch = golden["batches"][0]
    want = kime.Model(str(golden["artifact"])).executor().run(*arrays(batch))
    for m in (kime.Model(str(signed), trusted_keys=[other, trusted]), kime.Model.from_bytes(data, trusted_keys=[trusted])):
        got = m.executor().run(*arrays(batch))
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    with pytest.raises(kime.BadArtifact, match="which is not trusted"):
        kime.Model(str(signed), trusted_keys=[other])
    with pytest.raises(kime.BadArtifact, match="is not signed"):
        kime.Model(str(golden["artifact"]), trusted_keys=[trusted])
    with pytest.raises(kime.BadArtifact, match="not a kime public key"):
        kime.Model.from_bytes(data, trusted_keys=["not a key"])


def test_no_cuda_driver_raises_device_error(golden, monkeypatch):
    monkeypatch.setenv("KIME_LIBCUDA", "/nonexistent/libcuda.so.1")
    with pytest.raises(kime.DeviceError, match="no CUDA driver"):
        kime.Model(str(golden["artifact"])).executor(device="cuda")


@pytest.mark.parametrize("bad, message", [
    (np.array([1.0, 2.0]), r"ids: expected a numpy array of integers \(uint32 is read without a copy\), got float64"),
    (np.array([1, -2], np.int64), r"ids\[1\]: -2 does not fit uint32"),
    (np.array([1, 2**32], np.uint64), r"ids\[1\]: 4294967296 does not fit uint32"),
    (np.ones((2, 2), np.uint32), "ids: expected a 1-D array, got 2 dimensions"),
    ([1, -2], r"ids\[1\]: -2 does not fit uint32"),
    ("12", "ids: expected a numpy array or a sequence of ints"),
])
def test_inputs_of_the_wrong_dtype_or_shape_are_refused_by_name(golden, bad, message):
    exe = kime.Model(str(golden["artifact"])).executor()
    with pytest.raises((TypeError, ValueError), match=message):
        exe.run(bad, [0, 2], [], [0, 0], [0])
    with pytest.raises(ValueError, match=r"qtype\[0\]: 300 does not fit uint8"):
        exe.run([1, 2], [0, 2], [], [0, 0], np.array([300], np.int64))


def test_integer_arrays_of_any_dtype_give_the_same_outputs(golden):
    """int64 (tokenizers', torch's), int32 and uint16 arrays run as the uint32 ones do."""
    exe = kime.Model(str(golden["artifact"])).executor()
    ids, cu, markers, mcu, qtype = [3, 1, 4, 1, 5], [0, 3, 5], [0, 2, 1], [0, 2, 3], [1, 0]
    want = exe.run(*(np.array(a, np.uint32) for a in (ids, cu, markers, mcu)), np.array(qtype, np.uint8))
    for dtype in (np.int64, np.int32, np.uint16):
        got = exe.run(*(np.array(a, dtype) for a in (ids, cu, markers, mcu, qtype)))
        assert all(np.array_equal(g, w) for g, w in zip(got, want))


def test_a_marker_at_every_token_is_markers_none(golden):
    exe = kime.Model(str(golden["artifact"])).executor()
    ids, cu = np.array([3, 1, 4, 1, 5], np.uint32), np.array([0, 3, 5], np.uint32)
    logits, act = exe.run(ids, cu, None, None, np.array([1, 0], np.uint8))
    want_logits, want_act = exe.run(ids, cu, np.array([0, 1, 2, 0, 1], np.uint32), cu, np.array([1, 0], np.uint8))
    assert logits.shape == (5,) and np.array_equal(logits, want_logits) and np.array_equal(act, want_act)
    with pytest.raises(ValueError, match="markers and mcu: give both, or neither"):
        exe.run(ids, cu, None, cu)


def test_contiguous_uint32_input_is_not_copied():
    from kime import _runtime

    a = np.arange(10, dtype=np.uint32)
    assert _runtime._input_address(a) == a.ctypes.data
    strided = a[::2]
    assert _runtime._input_address(strided) != strided.ctypes.data  # copied: not contiguous


def test_two_threads_share_an_executor(golden):
    exe = kime.Model(str(golden["artifact"])).executor(threads=1)
    batches = [arrays(b) for _, b in golden["batches"]]
    want = [exe.run(*b) for b in batches]
    errors = []

    def worker(k):
        try:
            for i in range(20):
                j = (i + k) % len(batches)
                got = exe.run(*batches[j])
                assert np.array_equal(got[0], want[j][0]) and np.array_equal(got[1], want[j][1])
        except Exception as e:  # reported below: pytest sees no exception raised in a thread
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert exe.stats()["batches"] == len(batches) + 40
