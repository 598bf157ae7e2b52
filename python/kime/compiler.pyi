from typing import Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

from kime import Indices, Types

def compile(
    graph: str,
    weights: Optional[str],
    buckets: str,
    output: Optional[str] = None,
    targets: Sequence[str] = (),
    cuda_archs: Optional[Sequence[str]] = None,
    cuda_math: Sequence[str] = (),
    cpu_precision: str = "f32",
    selftest: int = 0,
    verify: bool = False,
    jobs: int = 1,
    fusion: bool = True,
    sign_key: str = "",
    cache: bool = True,
    cache_dir: str = "",
    selftest_from: str = "",
) -> Union[str, bytes]: ...
def reference(
    graph: str, weights: str, ids: Indices, cu: Indices, markers: Indices, mcu: Indices, qtype: Types
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
def import_onnx(model: str, graph: str, weights: str, logits: str = "", act: str = "") -> dict: ...
