"""kime.dask: score a corpus of sequences on a dask.distributed cluster.

    import kime.dask
    from distributed import Client
    client = Client("tcp://scheduler:8786")
    kime.dask.score_jsonl(client, "model.kime", "corpus.jsonl", "scored.jsonl", stage="bulk")

A record is {"id", "ids", "markers", "qtype"} (ids and markers lists of ints, markers positions in
the sequence), and optionally "ttype", a type per token (sentence pairs). Each output record is the input record with a field per output of the model, by
name (the seed's: "logits", one per marker, and "act", a pair): a per-marker output a list with an
entry per marker, a per-sequence one its row, each entry a number where the output is one wide and
a list of its width otherwise; in input order. kime's outputs are batch-invariant (docs/batch.md), so every record gets
exactly the bits of a one-process run of it alone, however the cluster packs it.

Each worker opens the artifact once (sent once as bytes, or read from a path every worker can
see) and keeps its executor. Within a partition, records are sorted by length and packed into the
stage's largest bucket by tokens, sequences and markers, so that little is padded. A record the
runtime refuses is reported with its id and line: `on_error="raise"` fails the job with the first
one, `"collect"` scores the others and returns the refused ones beside them. Nothing is dropped
in silence.
"""
import hashlib
import json
import threading

import numpy as np

import kime

__all__ = ["Artifact", "RecordError", "score_bag", "score_jsonl", "read_jsonl"]


class RecordError(kime.Error):
    """A record the runtime refuses: its id, its line (1-based in a JSON Lines file, else its place
    in the input from 0) and the runtime's message."""

    def __init__(self, record_id, line, message):
        super().__init__(f"record {record_id!r} (line {line}): {message}")
        self.record_id, self.line, self.message = record_id, line, message


# Per worker process: the open models and their executors, by artifact digest and thread.
_models = {}
_models_lock = threading.Lock()
_executors = threading.local()


class Artifact:
    """How workers get the artifact: its bytes (scattered once to every worker) or a path."""

    def __init__(self, data=None, path=None, trusted_keys=()):
        self.data, self.path, self.trusted_keys = data, path, list(trusted_keys)
        source = data if data is not None else open(path, "rb").read()
        self.digest = hashlib.sha256(source).hexdigest()

    def ref(self):
        """The same artifact without its bytes: what each task carries (the bytes go once per
        worker, scattered)."""
        r = Artifact.__new__(Artifact)
        r.data, r.path, r.trusted_keys, r.digest = None, self.path, self.trusted_keys, self.digest
        return r

    def open(self, data=None):
        with _models_lock:
            model = _models.get(self.digest)
            if model is None:
                if data is not None:
                    model = kime.Model.from_bytes(data, trusted_keys=self.trusted_keys)
                else:
                    model = kime.Model(self.path, trusted_keys=self.trusted_keys)
                _models[self.digest] = model
            return model


def _executor(artifact, stage, data):
    cache = getattr(_executors, "by_key", None)
    if cache is None:
        cache = _executors.by_key = {}
    key = (artifact.digest, stage)
    if key not in cache:
        model = artifact.open(data)
        cache[key] = (model, model.executor(stage, threads=1))
    return cache[key]


def _refusal(model, bucket, rec):
    """Why the runtime would refuse `rec` alone, in the runtime's words, or None."""
    ids, markers = rec["ids"], rec["markers"]
    if any(not 0 <= i < model.vocab for i in ids):
        return f"an id past the vocabulary ({model.vocab})"
    if model.padding_id >= 0 and model.padding_id in ids:
        return f"token {ids.index(model.padding_id)}: id {model.padding_id} is the model's padding id"
    if any(not 0 <= m < len(ids) for m in markers):
        return f"a marker past its sequence of {len(ids)} tokens"
    if not 0 <= rec["qtype"] < max(model.types, 1):
        return f"qtype {rec['qtype']} past the model's {model.types} types"
    ttype = rec.get("ttype")
    if ttype is not None and (len(ttype) != len(ids) or any(not 0 <= t < max(model.types, 1) for t in ttype)):
        return f"ttype: {len(ttype)} token types for {len(ids)} tokens, each below the model's {model.types} types"
    if len(ids) > bucket[0] or len(markers) > bucket[2]:
        return (f"{len(ids)} tokens and {len(markers)} markers: no bucket of the stage holds them "
                f"(the largest: {bucket[0]} tokens, {bucket[2]} markers)")
    return None


def _pack(records, bucket):
    """Batches of records (sorted by length), each within the bucket's tokens, seqs and markers."""
    batches, cur, tokens, marks = [], [], 0, 0
    for rec in sorted(records, key=lambda r: len(r["ids"])):
        n, m = len(rec["ids"]), len(rec["markers"])
        if cur and (tokens + n > bucket[0] or len(cur) + 1 > bucket[1] or marks + m > bucket[2]):
            batches.append(cur)
            cur, tokens, marks = [], 0, 0
        cur.append(rec)
        tokens, marks = tokens + n, marks + m
    if cur:
        batches.append(cur)
    return batches


def _run(model, executor, batch):
    cu = np.cumsum([0] + [len(r["ids"]) for r in batch]).astype(np.uint32)
    mcu = np.cumsum([0] + [len(r["markers"]) for r in batch]).astype(np.uint32)
    ids = np.fromiter((i for r in batch for i in r["ids"]), np.uint32, int(cu[-1]))
    markers = np.fromiter((m for r in batch for m in r["markers"]), np.uint32, int(mcu[-1]))
    qtype = np.array([r["qtype"] for r in batch], np.uint8)
    typed = any("ttype" in r for r in batch)  # each record's own, or its qtype on every token
    token_types = np.fromiter((t for r in batch for t in r.get("ttype", [r["qtype"]] * len(r["ids"]))), np.uint8,
                              int(cu[-1])) if typed else None
    got = executor.run(ids, cu, markers, mcu, qtype, token_types)
    outputs = model.outputs  # (name, "per-marker" | "per-sequence", width), the order `got` has
    arrays = dict(zip((o[0] for o in outputs), got)) if isinstance(got, tuple) else got
    for i, rec in enumerate(batch):
        for name, kind, _ in outputs:
            rows = arrays[name]
            rec[name] = (rows[mcu[i]:mcu[i + 1]] if kind == "per-marker" else rows[i]).tolist()


def score_partition(entries, artifact, stage, data=None):
    """Scores one partition of (line, record) pairs; returns (line, record, error) in order: the
    record with its outputs, or error {"id", "line", "message"} for a refused one."""
    model, executor = _executor(artifact, stage, data)
    bucket = model.buckets(stage)[-1]
    out, good = [], []
    for line, rec in entries:
        rec = dict(rec)
        why = _refusal(model, bucket, rec)
        out.append((line, rec, None if why is None else _error(rec, line, why)))
        if why is None:
            good.append(rec)
    for batch in _pack(good, bucket):
        try:
            _run(model, executor, batch)
        except kime.Error:  # a refusal the checks above do not know: each record alone says whose
            for rec in batch:
                _run_alone(model, executor, rec, out)
    return out


def _run_alone(model, executor, rec, out):
    try:
        _run(model, executor, [rec])
    except kime.Error as e:
        for i, (line, r, _) in enumerate(out):
            if r is rec:
                out[i] = (line, rec, _error(rec, line, str(e)))


def _error(rec, line, message):
    return {"id": rec.get("id"), "line": line, "message": message}


def read_jsonl(path, blocksize="16MiB"):
    """A JSON Lines file as a Dask bag of (line, record), lines counted from 1 across partitions."""
    import dask
    import dask.bag as db

    lines = db.read_text(path, blocksize=blocksize)
    counts = lines.map_partitions(lambda part: [sum(1 for _ in part)]).compute()
    starts = np.cumsum([1] + counts[:-1]).tolist()
    parts = [dask.delayed(_numbered)(part, start) for part, start in zip(lines.to_delayed(), starts)]
    return db.from_delayed(parts)


def _numbered(lines, start):
    out = []
    for i, text in enumerate(lines):
        if text.strip():
            out.append((start + i, json.loads(text)))
    return out


def _artifact_arg(client, artifact):
    """What each task gets: the bytes, scattered once to every worker, or None (a path)."""
    if artifact.data is None:
        return None
    return client.scatter(artifact.data, broadcast=True, hash=False)


def score_bag(client, artifact, entries, stage="bulk", on_error="raise", progress=False):
    """Scores a bag of (line, record) on `client`'s cluster; returns [(line, record, error)] in
    input order (error None, or the refusal of that record). `artifact`: kime.dask.Artifact(data=...
    or path=..., trusted_keys=[texts of .pub files])."""
    if on_error not in ("raise", "collect"):
        raise ValueError(f'on_error must be "raise" or "collect", not {on_error!r}')
    data = _artifact_arg(client, artifact)
    scored = entries.map_partitions(score_partition, artifact.ref(), stage, data)
    futures = client.compute(scored.to_delayed())
    if progress:
        from distributed import progress as show

        show(futures)
    results = [triple for part in client.gather(futures) for triple in part]
    if on_error == "raise":
        for _, _, err in results:
            if err is not None:
                raise RecordError(err["id"], err["line"], err["message"])
    return results


def score_jsonl(client, model_path, in_path, out_path, stage="bulk", on_error="raise", errors_path=None,
                trusted_keys=(), ship="bytes", blocksize="16MiB", progress=False):
    """Scores a JSON Lines file into `out_path` (written to a temporary file, then renamed: a job
    that fails or is killed leaves no half file under that name). Refused records (on_error
    "collect") go to `errors_path` as JSON lines {"id", "line", "message"}. `ship`: "bytes" sends
    the artifact to every worker once; "path" has each worker read `model_path` (shared storage).
    Returns (scored, refused) counts."""
    import os

    if on_error == "collect" and errors_path is None:
        raise ValueError('on_error="collect" needs errors_path, so that refused records are kept somewhere')
    artifact = (Artifact(data=open(model_path, "rb").read(), trusted_keys=trusted_keys) if ship == "bytes"
                else Artifact(path=os.path.abspath(model_path), trusted_keys=trusted_keys))
    results = score_bag(client, artifact, read_jsonl(in_path, blocksize), stage, on_error, progress)
    refused = [err for _, _, err in results if err is not None]
    _write_atomically(out_path, (rec for _, rec, err in results if err is None))
    if errors_path is not None:
        _write_atomically(errors_path, refused)
    return len(results) - len(refused), len(refused)


def _write_atomically(path, records):
    import os
    import tempfile

    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", dir=folder)
    try:
        with os.fdopen(fd, "w") as f:
            for rec in records:
                f.write(json.dumps(rec, separators=(",", ":")) + "\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
