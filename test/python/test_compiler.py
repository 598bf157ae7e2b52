"""kime.compiler from Python: the reference evaluator, compile to bytes, and its errors."""
import numpy as np
import pytest

import kime
import kime.compiler
from conftest import BUCKETS


def test_compiled_outputs_are_within_tolerance_of_the_reference(golden):
    exe = kime.Model(str(golden["artifact"])).executor()
    for _, b in golden["batches"]:
        args = (b["ids"], b["cu"], b["markers"], b["mcu"], b["qtype"])
        logits, act = exe.run(*args)
        ref_logits, ref_act = kime.compiler.reference(str(golden["graph"]), str(golden["weights"]), *args)
        assert ref_logits.dtype == np.float64
        assert np.allclose(logits, ref_logits, rtol=1e-3, atol=1e-4)
        assert np.allclose(act, ref_act, rtol=1e-3, atol=1e-4)


def test_compile_to_bytes_runs_as_the_artifact_it_writes(golden, capfd):
    data = kime.compiler.compile(str(golden["graph"]), str(golden["weights"]), str(BUCKETS), targets=["x86-64-avx2"],
                                 cuda_archs=[], jobs=2)
    assert isinstance(data, bytes) and data[:8] == b"KIMEART1"
    assert "codegen x86-64-avx2" in capfd.readouterr().err  # kime-compile's progress lines
    _, b = golden["batches"][0]
    args = (b["ids"], b["cu"], b["markers"], b["mcu"], b["qtype"])
    got = kime.Model.from_bytes(data).executor().run(*args)
    want = kime.Model(str(golden["artifact"])).executor().run(*args)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_the_kernel_cache_gives_the_bytes_of_a_compile_without_it(golden, tmp_path, capfd):
    args = (str(golden["graph"]), str(golden["weights"]), str(BUCKETS))
    opts = dict(targets=["x86-64-avx2"], cuda_archs=[], jobs=2)
    plain = kime.compiler.compile(*args, cache=False, **opts)
    cold = kime.compiler.compile(*args, cache_dir=str(tmp_path / "cache"), **opts)
    warm = kime.compiler.compile(*args, cache_dir=str(tmp_path / "cache"), **opts)
    assert plain == cold == warm
    lines = [l for l in capfd.readouterr().err.splitlines() if l.startswith("codegen cpu:")]
    assert ", 0 from the cache" in lines[1]  # cold: everything compiled
    assert lines[2].startswith("codegen cpu: 0 objects compiled")  # warm: nothing


def test_a_compile_error_is_raised_with_the_compilers_message(golden, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"stages": {"serve": []}}')
    with pytest.raises(kime.CompileError, match="bad.json"):
        kime.compiler.compile(str(golden["graph"]), str(golden["weights"]), str(bad), targets=["x86-64-avx2"],
                              cuda_archs=[])
    with pytest.raises(kime.CompileError, match="unknown target"):
        kime.compiler.compile(str(golden["graph"]), str(golden["weights"]), str(BUCKETS), targets=["z80"], cuda_archs=[])


def test_a_bad_batch_for_the_reference_raises_bad_batch(golden):
    with pytest.raises(kime.BadBatch):
        kime.compiler.reference(str(golden["graph"]), str(golden["weights"]), [1], [1, 1], [], [0, 0], [0])
