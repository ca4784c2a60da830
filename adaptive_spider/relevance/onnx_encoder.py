"""The sentence encoder run by ONNX Runtime with 8-bit weights: the same model, about 4x cheaper.

:class:`~adaptive_spider.relevance.sentence_encoder.SentenceEncoder` runs all-MiniLM-L6-v2 in
NumPy at about 53 ms of one core a page (128 tokens, this project's machine), more than a
crawl's worker process can keep up with at Scrapy's pace. ONNX Runtime with the weights of its
matrix products quantized to 8 bits, per output channel, takes about 14 ms for the same page,
and its embeddings keep a cosine of .99 with NumPy's (``tests/test_onnx_encoder.py``).

No model file is downloaded or stored: the ONNX graph (BERT's layers as
:class:`SentenceEncoder` computes them) is built in memory from the same ``model.safetensors``
when the encoder starts, then quantized (``onnxruntime.quantization.quantize_dynamic``), which
takes a few seconds. ``pip install onnx onnxruntime`` (the ``embedding`` extra) is needed only
by this runtime (``ADAPTIVE_EMBEDDING_RUNTIME=onnx``).
"""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from adaptive_spider.relevance.sentence_encoder import SentenceEncoder
from adaptive_spider.settings.table import EMBEDDING_RUNTIMES

_OPSET = 17  # LayerNormalization's first opset


class RuntimeMissing(ImportError):
    """``onnx`` or ``onnxruntime`` is not installed."""


def _import_onnx() -> tuple[Any, Any]:
    try:
        import onnx
        import onnxruntime
    except ImportError as error:
        raise RuntimeMissing(
            f"the onnx runtime needs the onnx and onnxruntime packages ({error}): pip install onnx onnxruntime"
        ) from None
    return onnx, onnxruntime


def build_graph(encoder: SentenceEncoder) -> Any:
    """An ONNX model of ``encoder``'s forward pass: inputs ``ids`` (batch x tokens, int64),
    ``positions`` (tokens, int64) and ``blocked`` (batch x 1 x 1 x tokens: 0, or -1e9 for
    padding); output ``hidden`` (batch x tokens x width), before pooling."""
    onnx, _ = _import_onnx()
    from onnx import TensorProto, helper, numpy_helper

    nodes: list[Any] = []
    weights: list[Any] = []

    def constant(name: str, value: np.ndarray) -> str:
        # (np.ascontiguousarray would make a scalar, such as Gather's index, a vector.)
        weights.append(numpy_helper.from_array(np.require(value, requirements="C"), name))
        return name

    def op(kind: str, inputs: list[str], output: str, **attributes: Any) -> str:
        nodes.append(helper.make_node(kind, inputs, [output], name=output, **attributes))
        return output

    def layer_norm(x: str, norm: tuple[np.ndarray, np.ndarray], name: str) -> str:
        scale, shift = constant(name + ".w", norm[0]), constant(name + ".b", norm[1])
        return op("LayerNormalization", [x, scale, shift], name, axis=-1, epsilon=encoder.eps)

    def linear(x: str, matrix: np.ndarray, bias: np.ndarray, name: str) -> str:
        product = op("MatMul", [x, constant(name + ".w", matrix)], name + ".product")
        return op("Add", [product, constant(name + ".b", bias)], name)

    embedding = encoder.embeddings
    width = embedding["embeddings.word_embeddings.weight"].shape[1]
    heads, head_width = encoder.heads, width // encoder.heads
    words = op("Gather", [constant("word_embeddings", embedding["embeddings.word_embeddings.weight"]), "ids"], "words")
    places = op("Gather", [constant("position_embeddings", embedding["embeddings.position_embeddings.weight"]),
                           "positions"], "places")  # fmt: skip
    token_type = constant("token_type", embedding["embeddings.token_type_embeddings.weight"][0])
    x = op("Add", [op("Add", [words, places], "summed"), token_type], "embedded")
    norm = (embedding["embeddings.LayerNorm.weight"], embedding["embeddings.LayerNorm.bias"])
    x = layer_norm(x, norm, "embedding.norm")
    by_head = constant("by_head", np.array([0, 0, 3, heads, head_width], dtype=np.int64))
    joined = constant("joined", np.array([0, 0, width], dtype=np.int64))
    scale = constant("scale", np.array(1.0 / np.sqrt(head_width), dtype=np.float32))
    half, one = constant("half", np.array(0.5, dtype=np.float32)), constant("one", np.array(1.0, dtype=np.float32))
    root_two = constant("root_two", np.array(np.sqrt(2.0), dtype=np.float32))
    for index, layer in enumerate(encoder._layers):
        name = f"layer{index}"
        qkv = op("Reshape", [linear(x, layer.qkv, layer.qkv_bias, name + ".qkv"), by_head], name + ".qkv.heads")
        # batch, tokens, (q k v), heads, head width -> (q k v), batch, heads, tokens, head width
        qkv = op("Transpose", [qkv], name + ".qkv.t", perm=[2, 0, 3, 1, 4])
        q, k, v = (op("Gather", [qkv, constant(f"{name}.part{part}", np.array(part, dtype=np.int64))],
                      f"{name}.{letter}", axis=0) for part, letter in enumerate("qkv"))  # fmt: skip
        scores = op("MatMul", [q, op("Transpose", [k], name + ".k.t", perm=[0, 1, 3, 2])], name + ".scores")
        scores = op("Add", [op("Mul", [scores, scale], name + ".scaled"), "blocked"], name + ".masked")
        attended = op("MatMul", [op("Softmax", [scores], name + ".softmax", axis=-1), v], name + ".attended")
        attended = op("Transpose", [attended], name + ".attended.t", perm=[0, 2, 1, 3])
        attended = op("Reshape", [attended, joined], name + ".attended.joined")
        attended = linear(attended, layer.out, layer.out_bias, name + ".out")
        x = layer_norm(op("Add", [x, attended], name + ".residual1"), layer.attention_norm, name + ".norm1")
        inner = linear(x, layer.up, layer.up_bias, name + ".up")
        erf = op("Erf", [op("Div", [inner, root_two], name + ".gelu.div")], name + ".gelu.erf")
        gelu = op("Mul", [op("Mul", [inner, half], name + ".gelu.half"), op("Add", [erf, one], name + ".gelu.sum")],
                  name + ".gelu")  # fmt: skip
        down = linear(gelu, layer.down, layer.down_bias, name + ".down")
        x = layer_norm(op("Add", [x, down], name + ".residual2"), layer.output_norm, name + ".norm2")
    nodes.append(helper.make_node("Identity", [x], ["hidden"], name="hidden"))
    graph = helper.make_graph(
        nodes, "sentence_encoder",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "tokens"]),
         helper.make_tensor_value_info("positions", TensorProto.INT64, ["tokens"]),
         helper.make_tensor_value_info("blocked", TensorProto.FLOAT, ["batch", 1, 1, "tokens"])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "tokens", width])],
        weights,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", _OPSET)])
    model.ir_version = 8  # what every onnxruntime release since 1.10 reads
    onnx.checker.check_model(model)
    return model


def _no_preprocessing_advice(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith("Please consider to run pre-processing")


class OnnxSentenceEncoder(SentenceEncoder):
    """:class:`SentenceEncoder`'s model and tokenizer, its forward pass run by ONNX Runtime on
    one thread, the matrix products' weights in 8 bits (``quantized``, the default)."""

    def __init__(self, folder: str | Path, max_length: int | None = None, quantized: bool = True) -> None:
        onnx, onnxruntime = _import_onnx()
        super().__init__(folder, max_length)
        model = build_graph(self)
        if quantized:
            from onnxruntime.quantization import QuantType, quantize_dynamic

            # quantize_dynamic reads and writes files; the model stays on disk only this long.
            with tempfile.TemporaryDirectory(prefix="adaptive-onnx-") as scratch:
                plain, small = Path(scratch) / "model.onnx", Path(scratch) / "model.int8.onnx"
                onnx.save(model, plain)
                root = logging.getLogger()
                # quantize_dynamic advises pre-processing on the root logger, at every start:
                # the graph is built already simple (no shapes to infer, nothing to fuse).
                root.addFilter(_no_preprocessing_advice)
                try:
                    quantize_dynamic(plain, small, per_channel=True, weight_type=QuantType.QInt8)
                finally:
                    root.removeFilter(_no_preprocessing_advice)
                serialized = small.read_bytes()
        else:
            serialized = model.SerializeToString()
        options = onnxruntime.SessionOptions()
        # One core: a worker is to use one spare core, not compete with the crawl's.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self.session = onnxruntime.InferenceSession(serialized, options, providers=["CPUExecutionProvider"])
        # The NumPy copies of the weights are no longer needed (the session has its own).
        self._layers = []
        self.embeddings = {}

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        blocked = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :].astype(np.float32)
        positions = np.arange(ids.shape[1], dtype=np.int64)
        (hidden,) = self.session.run(["hidden"], {"ids": ids, "positions": positions, "blocked": blocked})
        return np.asarray(hidden)


def sentence_encoder(folder: str | Path, max_length: int | None = None, runtime: str = "numpy") -> SentenceEncoder:
    """The model in ``folder``, run by ``runtime`` (``ADAPTIVE_EMBEDDING_RUNTIME``: numpy or onnx)."""
    if runtime == "numpy":
        return SentenceEncoder(folder, max_length)
    if runtime == "onnx":
        return OnnxSentenceEncoder(folder, max_length)
    raise ValueError(f"runtime: {runtime!r}; choose from {', '.join(EMBEDDING_RUNTIMES)}")
