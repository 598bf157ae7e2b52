"""kime's exceptions, each carrying the runtime's (or the compiler's) message."""


class Error(Exception):
    """The base of every kime error."""


class BadBatch(Error, ValueError):
    """The batch is inconsistent (e.g. "bad batch: cu must start at 0")."""


class NoBucket(Error, ValueError):
    """No bucket of the stage holds the batch.

    Attributes: stage, tokens, seqs, markers (the batch's counts) and largest, the stage's
    largest bucket as (tokens, seqs, markers).
    """

    stage: str = ""
    tokens: int = 0
    seqs: int = 0
    markers: int = 0
    largest: tuple = (0, 0, 0)


class BadArtifact(Error):
    """An artifact this machine or build cannot use (damaged, another format version, code for no
    CPU here), or a request it does not support (an unknown stage, device or CPU target)."""


class DeviceError(Error):
    """The device or its driver failed (e.g. no CUDA driver)."""


class CompileError(Error):
    """kime.compiler: the compiler refused its inputs or failed, with kime-compile's message."""
