"""kime.dask and kime-score on a real cluster (LocalCluster: worker processes over TCP on loopback):
every record gets exactly the bits of a one-process run of it alone, whatever the workers and
partitions; a killed worker loses nothing; bad records and a missing scheduler are clear errors."""
import json
import os
import random
import signal
import subprocess
import threading
import time

import numpy as np
import pytest

import kime

distributed = pytest.importorskip("distributed", reason="no python3-distributed (scripts/setup.sh installs it)")
import kime.dask  # noqa: E402


def corpus(path, n, vocab, types, seed=5):
    r = random.Random(seed)
    with open(path, "w") as f:
        for i in range(n):
            length = r.choice([0, 1, r.randint(2, 12), r.randint(13, 90)])
            markers = sorted(r.randrange(length) for _ in range(r.randint(0, 3))) if length else []
            f.write(json.dumps({"id": f"q{i}", "ids": [r.randrange(vocab) for _ in range(length)],
                                "markers": markers, "qtype": r.randrange(types)}) + "\n")


def alone(model, records):
    """Each record run alone in one process: its logits and act as float32 bytes."""
    exe = model.executor("serve", threads=1)
    out = {}
    for rec in records:
        logits, act = exe.run(np.array(rec["ids"], np.uint32), np.array([0, len(rec["ids"])], np.uint32),
                              np.array(rec["markers"], np.uint32), np.array([0, len(rec["markers"])], np.uint32),
                              np.array([rec["qtype"]], np.uint8))
        out[rec["id"]] = (logits.tobytes(), act[0].tobytes())
    return out


def as_bytes(rec):
    return np.array(rec["logits"], np.float32).tobytes(), np.array(rec["act"], np.float32).tobytes()


@pytest.fixture(scope="module")
def scoring(golden, tmp_path_factory):
    model = kime.Model(str(golden["artifact"]))
    folder = tmp_path_factory.mktemp("dask")
    path = folder / "corpus.jsonl"
    corpus(path, 10000, model.vocab, model.types)
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return {"model": model, "path": path, "records": records, "want": alone(model, records), "folder": folder}


def cluster(workers):
    c = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    return c, distributed.Client(c)


@pytest.mark.parametrize("workers,blocksize", [(1, "4MiB"), (2, "256KiB"), (3, "64KiB")])
def test_every_record_has_the_bits_of_its_run_alone(golden, scoring, workers, blocksize):
    c, client = cluster(workers)
    try:
        art = kime.dask.Artifact(data=golden["artifact"].read_bytes())
        entries = kime.dask.read_jsonl(str(scoring["path"]), blocksize=blocksize)
        results = kime.dask.score_bag(client, art, entries, stage="bulk")
    finally:
        client.close(), c.close()
    assert [line for line, _, _ in results] == list(range(1, 10001))  # input order, each once
    assert all(err is None for _, _, err in results)
    got = {rec["id"]: as_bytes(rec) for _, rec, _ in results}
    assert got == scoring["want"]


def test_a_worker_killed_mid_job_loses_nothing(golden, scoring):
    c, client = cluster(2)
    pids = list(client.run(os.getpid).values())
    killed, done = [], threading.Event()

    def kill_one():
        time.sleep(0.3)
        os.kill(pids[0], signal.SIGKILL)
        killed.append(not done.is_set())  # whether the job was still running

    try:
        art = kime.dask.Artifact(path=str(golden["artifact"]))
        entries = kime.dask.read_jsonl(str(scoring["path"]), blocksize="16KiB")
        killer = threading.Thread(target=kill_one)
        killer.start()
        results = kime.dask.score_bag(client, art, entries, stage="bulk")
        done.set()
        killer.join()
    finally:
        client.close(), c.close()
    assert killed == [True]
    assert [line for line, _, _ in results] == list(range(1, 10001))
    assert {rec["id"]: as_bytes(rec) for _, rec, _ in results} == scoring["want"]


def score_cli(kime_bin, *args, timeout=120):
    return subprocess.run([str(kime_bin / "kime-score"), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def test_no_scheduler_is_a_clear_error_within_its_timeout(golden, scoring, kime_bin):
    start = time.monotonic()
    out = score_cli(kime_bin, golden["artifact"], scoring["path"], "-o", scoring["folder"] / "x.jsonl",
                    "--scheduler", "tcp://127.0.0.1:9", "--timeout", "3")
    assert out.returncode == 1
    assert "no scheduler answers at tcp://127.0.0.1:9 within 3 s" in out.stderr
    assert time.monotonic() - start < 40
    assert not (scoring["folder"] / "x.jsonl").exists()


def test_bad_records_fail_the_job_or_go_to_the_errors_file(golden, scoring, kime_bin, tmp_path):
    model = scoring["model"]
    lines = [{"id": "ok1", "ids": [1, 2, 3], "markers": [2], "qtype": 0},
             {"id": "vocab", "ids": [1, model.vocab + 5], "markers": [], "qtype": 0},
             {"id": "ok2", "ids": [4], "markers": [0], "qtype": 1},
             {"id": "marker", "ids": [1, 2], "markers": [7], "qtype": 0},
             {"id": "long", "ids": [1] * 5000, "markers": [], "qtype": 0}]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = tmp_path / "out.jsonl"
    out.write_text("kept\n")  # a failed job leaves what was there
    failed = score_cli(kime_bin, golden["artifact"], bad, "-o", out, "--workers", "1")
    assert failed.returncode == 1
    assert "record 'vocab' (line 2)" in failed.stderr and "vocabulary" in failed.stderr
    assert out.read_text() == "kept\n"
    errors = tmp_path / "errors.jsonl"
    done = score_cli(kime_bin, golden["artifact"], bad, "-o", out, "--workers", "1", "--errors", errors)
    assert done.returncode == 0, done.stderr
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["ok1", "ok2"]
    refused = [json.loads(x) for x in errors.read_text().splitlines()]
    assert [(e["id"], e["line"]) for e in refused] == [("vocab", 2), ("marker", 4), ("long", 5)]
    assert "past its sequence" in refused[1]["message"] and "no bucket" in refused[2]["message"]


def test_a_model_of_named_outputs_gets_a_field_per_output(golden, tmp_path):
    """A Graph of format 3 (each sequence's first normed row, 'cls' [S, width], then the logits):
    each record gets its outputs by name, a row of the per-sequence one and a value per marker of
    the per-marker one, the bits of its run alone."""
    import kime.compiler

    g = json.loads(golden["graph"].read_text())
    g["format"], g["outputs"] = 3, [{"name": "cls", "value": "head.act.rows"},
                                    {"name": "logits", "value": "head.marker.logits"}]
    graph = tmp_path / "named.json"
    graph.write_text(json.dumps(g))
    artifact = tmp_path / "named.kime"
    buckets = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "small", "buckets.json")
    kime.compiler.compile(str(graph), str(golden["weights"]), buckets, output=str(artifact),
                          targets=["x86-64-avx2"], cuda_archs=[], jobs=2)
    model = kime.Model(str(artifact))
    width = model.outputs[0][2]
    assert [o[:2] for o in model.outputs] == [("cls", "per-sequence"), ("logits", "per-marker")] and width > 2
    corpus(tmp_path / "c.jsonl", 200, model.vocab, model.types, seed=9)
    c, client = cluster(1)
    try:
        results = kime.dask.score_bag(client, kime.dask.Artifact(path=str(artifact)),
                                      kime.dask.read_jsonl(str(tmp_path / "c.jsonl")), stage="bulk")
    finally:
        client.close(), c.close()
    exe = model.executor("serve", threads=1)
    for _, rec, err in results:
        assert err is None
        out = exe.run(np.array(rec["ids"], np.uint32), np.array([0, len(rec["ids"])], np.uint32),
                      np.array(rec["markers"], np.uint32), np.array([0, len(rec["markers"])], np.uint32),
                      np.array([rec["qtype"]], np.uint8))
        assert np.array(rec["cls"], np.float32).tobytes() == out["cls"][0].tobytes() and len(rec["cls"]) == width
        assert np.array(rec["logits"], np.float32).tobytes() == out["logits"].tobytes()


def test_records_with_token_types_are_refused_when_they_do_not_fit(golden, tmp_path):
    """A record's ttype (a type per token) must have a type per token within the model's types; a
    record that has none keeps its qtype on every token."""
    model = kime.Model(str(golden["artifact"]))
    good = {"id": "a", "ids": [1, 2, 3], "markers": [0], "qtype": 1, "ttype": [0, 1, 1]}
    short = {"id": "b", "ids": [1, 2, 3], "markers": [], "qtype": 0, "ttype": [0]}
    bucket = model.buckets("bulk")[-1]
    assert kime.dask._refusal(model, bucket, good) is None
    assert "1 token types for 3 tokens" in kime.dask._refusal(model, bucket, short)
    exe = model.executor("bulk", threads=1)
    batch = [dict(good), {"id": "c", "ids": [4, 5], "markers": [1], "qtype": 1}]
    kime.dask._run(model, exe, batch)
    assert len(batch[0]["logits"]) == 1 and len(batch[1]["act"]) == 2
