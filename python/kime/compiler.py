"""kime's compiler and f64 reference evaluator, in this process (where the compiler is built).

    path = kime.compiler.compile("graph.json", "model.safetensors", "buckets.json", output="model.kime")
    logits, act = kime.compiler.reference("graph.json", "model.safetensors", ids, cu, markers, mcu, qtype)
"""

try:
    from kime._compiler import compile, reference  # noqa: A004 (kime-compile's own word)
except ImportError as e:  # a runtime-only build or install
    raise ImportError("kime.compiler: this kime was built without its compiler (KIME_BUILD_COMPILER=OFF)") from e

__all__ = ["compile", "reference"]
