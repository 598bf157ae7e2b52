"""kime's compiler and f64 reference evaluator, in this process (where the compiler is built).

    path = kime.compiler.compile("graph.json", "model.safetensors", "buckets.json", output="model.kime")
    kime.compiler.import_onnx("model.onnx", "graph.json", "model.safetensors")
    data = kime.compiler.compile("model.onnx", None, "buckets.json")
    logits, act = kime.compiler.reference("graph.json", "model.safetensors", ids, cu, markers, mcu, qtype)
"""

try:
    from kime._compiler import compile, import_onnx, reference  # noqa: A004 (kime-compile's own word)
except ImportError as e:  # a runtime-only build or install
    raise ImportError("kime.compiler: this kime was built without its compiler (KIME_BUILD_COMPILER=OFF)") from e

__all__ = ["compile", "import_onnx", "reference"]
