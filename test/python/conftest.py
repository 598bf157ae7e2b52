"""Fixtures of the Python package's tests (run by ctest `python`, with PYTHONPATH at the build's
python/ folder): the built tools, and a golden model compiled in-process once per session."""
import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "test" / "data" / "golden" / "tiny-rms-gelu-learned"
BUCKETS = ROOT / "examples" / "small" / "buckets.json"  # buckets that hold every golden batch


def _bin():
    path = os.environ.get("KIME_BIN")
    if not path:
        pytest.fail("KIME_BIN (the build's bin folder) is not set: run these tests through ctest")
    return pathlib.Path(path)


@pytest.fixture(scope="session")
def kime_bin():
    return _bin()


@pytest.fixture(scope="session")
def golden(tmp_path_factory):
    """The golden model: its Graph (kime-graph), compiled for AVX2 by kime.compiler, its batches."""
    import kime.compiler

    out = tmp_path_factory.mktemp("golden")
    graph = out / "graph.json"
    subprocess.run([_bin() / "kime-graph", GOLDEN / "config.json", "-o", graph], check=True, capture_output=True)
    artifact = out / "model.kime"
    kime.compiler.compile(str(graph), str(GOLDEN / "model.safetensors"), str(BUCKETS), output=str(artifact),
                          targets=["x86-64-avx2"], cuda_archs=[], selftest=3, jobs=2)
    batches = sorted(GOLDEN.glob("batch_*.json"))
    return {"graph": graph, "weights": GOLDEN / "model.safetensors", "artifact": artifact,
            "batches": [(b, json.loads(b.read_text())) for b in batches]}
