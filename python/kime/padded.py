"""A padded batch as tokenizers and frameworks give it, run on kime's packed executor.

    import kime
    executor = kime.Model("model.kime").executor()
    outputs = executor(**tokenizer(texts, padding=True, return_tensors="np"))

input_ids [B, L] (any integer dtype), attention_mask [B, L] (1 on each row's tokens, then 0: right
padding) and token_type_ids [B, L] (a type per token: sentence pairs; a row's first is also its
sequence's qtype, for a model that reads one type a sequence) become one packed batch with a marker
at every token; the outputs come back in the padded layout by name: a
per-marker output [B, L, K] ([B, L] where one wide, zeros at padding), a per-sequence one [B, K]
([B] where one wide).
"""
import numpy as np

__all__ = ["run_padded"]


def _lengths(input_ids, attention_mask):
    B, L = input_ids.shape
    if attention_mask is None:
        return np.full(B, L, np.int64)
    mask = np.asarray(attention_mask)
    if mask.shape != (B, L):
        raise ValueError(f"attention_mask: expected the shape of input_ids {(B, L)}, got {mask.shape}")
    lengths = (mask != 0).sum(axis=1)
    for b in range(B):
        if not (mask[b, :lengths[b]] != 0).all():
            raise ValueError(f"attention_mask row {b}: not 1s then 0s (kime reads right-padded batches; "
                             "pad on the right, as tokenizers do by default)")
    return lengths


def _types(token_type_ids, lengths, B, L):
    """Each sequence's type (its first token's) and the packed per-token types, or (zeros, None)."""
    if token_type_ids is None:
        return np.zeros(B, np.uint8), None
    types = np.asarray(token_type_ids)
    if types.shape != (B, L):
        raise ValueError(f"token_type_ids: expected the shape of input_ids {(B, L)}, got {types.shape}")
    per_seq = np.array([types[b, 0] if lengths[b] else 0 for b in range(B)], np.int64)
    packed = np.concatenate([types[b, :lengths[b]] for b in range(B)]) if B else np.zeros(0, np.int64)
    return per_seq, packed


def run_padded(executor, input_ids, attention_mask=None, token_type_ids=None):
    """Runs a padded batch (see the module's text); returns a dict of numpy arrays by output name."""
    ids = np.asarray(input_ids)
    if ids.ndim != 2:
        raise ValueError(f"input_ids: expected [B, L], got {ids.ndim} dimensions")
    B, L = ids.shape
    lengths = _lengths(ids, attention_mask)
    cu = np.concatenate([[0], np.cumsum(lengths)]).astype(np.uint32)
    packed = np.concatenate([ids[b, :lengths[b]] for b in range(B)]) if B else np.zeros(0, np.int64)
    qtype, token_types = _types(token_type_ids, lengths, B, L)
    got = executor.run(packed, cu, None, None, qtype, token_types)
    outputs = executor.outputs
    arrays = dict(zip((o[0] for o in outputs), got)) if isinstance(got, tuple) else got
    out = {}
    for name, kind, width in outputs:
        values = arrays[name]
        if kind == "per-sequence":
            out[name] = values
            continue
        padded = np.zeros((B, L) + ((width,) if width > 1 else ()), values.dtype)
        for b in range(B):
            padded[b, :lengths[b]] = values[cu[b]:cu[b + 1]]
        out[name] = padded
    return out
