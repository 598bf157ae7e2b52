"""kime: run ahead-of-time compiled transformer encoders from Python.

    import kime
    model = kime.Model("model.kime")
    logits, act = model.executor().run(ids, cu, markers, mcu, qtype)

A batch is packed: sequence s is tokens cu[s]..cu[s+1] of ids and markers mcu[s]..mcu[s+1] of
markers (positions within their sequence); qtype[s] is its question type. ids, cu, markers and
mcu are uint32, qtype uint8; contiguous numpy arrays of those dtypes are read without a copy,
lists are converted. Outputs: one float32 logit per marker, an act pair per sequence.
kime.compiler (where the compiler is built) compiles artifacts and evaluates the f64 reference.
"""

from kime._runtime import Executor, Model
from kime.errors import BadArtifact, BadBatch, CompileError, DeviceError, Error, NoBucket

__all__ = ["Model", "Executor", "Error", "BadBatch", "NoBucket", "BadArtifact", "DeviceError", "CompileError"]
