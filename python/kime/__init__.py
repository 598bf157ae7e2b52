"""kime: run ahead-of-time compiled transformer encoders from Python.

    import kime
    model = kime.Model("model.kime")
    logits, act = model.executor().run(ids, cu, markers, mcu, qtype)    # the seed's two outputs
    outputs = model.executor().run(ids, cu)          # a dict by name; a marker at every token
    outputs = model.executor()(**tokenizer(texts, padding=True, return_tensors="np"))  # padded

A batch is packed: sequence s is tokens cu[s]..cu[s+1] of ids and markers mcu[s]..mcu[s+1] of
markers (positions within their sequence); qtype[s] is its question type. ids, cu, markers and
mcu are uint32, qtype uint8; contiguous numpy arrays of those dtypes are read without a copy, other
integer arrays and lists are converted (each value checked). Outputs: a dict of float32 arrays by
output name (Model.outputs: per marker [M] or [M, K], per sequence [S] or [S, K]), or the pair
(logits [M], act [S, 2]) for a model of exactly the seed's outputs. Called with a padded batch
(input_ids, attention_mask, token_type_ids [B, L]), an executor runs it packed and answers in the
padded layout (kime.padded).
kime.compiler (where the compiler is built) compiles artifacts and evaluates the f64 reference.
"""

from kime._runtime import Executor, Model
from kime.errors import BadArtifact, BadBatch, CompileError, DeviceError, Error, NoBucket
from kime.padded import run_padded

Executor.__call__ = run_padded  # executor(input_ids=..., attention_mask=..., token_type_ids=...)

__all__ = ["Model", "Executor", "Error", "BadBatch", "NoBucket", "BadArtifact", "DeviceError", "CompileError"]
