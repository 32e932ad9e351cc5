"""Query embedding on ONNX Runtime: the same weights, about twice as fast for one short text.

A search embeds one short query and waits for it. With torch on 2 cores that took ~16 ms
of a ~60 ms search; ONNX Runtime runs the same graph in ~7 ms. The graph is exported
once from the loaded sentence-transformers model (transformer + mean pooling + L2
normalisation, the modules of the default model) into lode's cache folder, keyed by the
model files and the library versions, and reused after that. Nothing is downloaded. The
vectors equal torch's to about 1e-6 (a test checks), so queries and the documents that
torch embedded stay in one space. Any other model layout, or any failure, keeps torch.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["QueryEncoder", "onnx_cache_dir", "onnx_query_encoder"]

log = logging.getLogger(__name__)

QueryEncoder = Callable[[Sequence[str]], np.ndarray]

_FORMAT = "lode-query-onnx-1"


def onnx_cache_dir() -> Path:
    """Where exported query graphs are kept (``LODE_CACHE_DIR`` or the user cache folder)."""
    configured = os.environ.get("LODE_CACHE_DIR")
    if configured:
        return Path(configured).expanduser() / "onnx"
    import platformdirs

    return Path(platformdirs.user_cache_dir("lode")) / "onnx"


def onnx_query_encoder(model: Any, model_dir: str, threads: int | None = None) -> QueryEncoder | None:
    """An ONNX Runtime encoder equivalent to ``model.encode(..., normalize_embeddings=True)``
    for a transformer + mean pooling + normalize model; None when that cannot be had."""
    try:
        if not _is_mean_pooled(model):
            log.info("query embedding stays on torch: the model is not transformer + mean pooling")
            return None
        import onnxruntime as ort

        path = _exported(model, model_dir)
        try:
            ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        except Exception:  # a damaged cached file: export it again, once
            path.unlink(missing_ok=True)
            path = _exported(model, model_dir)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or min(4, os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # idle threads sleep: a search must not take CPU from indexing between queries
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # any failure keeps the torch path
        log.warning("query embedding stays on torch (ONNX Runtime unavailable: %s)", exc)
        return None

    prepare = getattr(model, "preprocess", None) or model.tokenize  # ``tokenize`` before v6

    def encode(texts: Sequence[str]) -> np.ndarray:
        features = prepare(list(texts))
        feeds = {
            "input_ids": features["input_ids"].numpy().astype(np.int64),
            "attention_mask": features["attention_mask"].numpy().astype(np.int64),
        }
        return np.asarray(session.run(None, feeds)[0], dtype=np.float32)

    return encode


def _is_mean_pooled(model: Any) -> bool:
    names = [type(module).__name__ for module in model]
    if names != ["Transformer", "Pooling", "Normalize"]:
        return False
    prompts = getattr(model, "prompts", None) or {}
    if getattr(model, "default_prompt_name", None) or any(prompts.values()):
        return False  # torch's encode would add a prompt this graph does not
    pooling = model[1].get_config_dict()
    mode = pooling.get("pooling_mode") or ("mean" if pooling.get("pooling_mode_mean_tokens") else None)
    return mode == "mean"


def _key(model_dir: str) -> str:
    import onnx
    import torch

    root = Path(model_dir).resolve()
    digest = hashlib.sha256(f"{_FORMAT}|{torch.__version__}|{onnx.__version__}|{root}".encode())
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        stat = path.stat()
        digest.update(f"|{path.relative_to(root)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:24]


def _exported(model: Any, model_dir: str) -> Path:
    """The cached ONNX file for this model, exported now if missing (atomic rename)."""
    target = onnx_cache_dir() / f"query-{_key(model_dir)}.onnx"
    if target.is_file():
        with contextlib.suppress(OSError):
            os.utime(target)  # marks it as used: pruning keeps the most recently used graphs
        return target
    import torch

    target.parent.mkdir(parents=True, exist_ok=True)
    graph = _graph(model[0].auto_model)
    sample = (getattr(model, "preprocess", None) or model.tokenize)(["an example query"])
    log.info("exporting the query model to ONNX (once): %s", target)
    with tempfile.NamedTemporaryFile(dir=target.parent, suffix=".tmp", delete=False) as handle:
        scratch = Path(handle.name)
    try:
        # the exporter warns about itself (legacy path, tracer notes): not the user's business
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                graph,
                (sample["input_ids"], sample["attention_mask"]),
                str(scratch),
                input_names=["input_ids", "attention_mask"],
                output_names=["embedding"],
                dynamic_axes={
                    "input_ids": {0: "batch", 1: "tokens"},
                    "attention_mask": {0: "batch", 1: "tokens"},
                    "embedding": {0: "batch"},
                },
                opset_version=17,
                dynamo=False,
            )
        os.replace(scratch, target)
    finally:
        scratch.unlink(missing_ok=True)
    prune_onnx_cache(target.parent, keep=target)
    return target


#: Exported graphs kept in the cache (~90 MB each for the default model): a new key comes
#: with every new model, library upgrade or installation folder.
KEEP_GRAPHS = 3


def prune_onnx_cache(folder: Path, keep: Path, count: int = KEEP_GRAPHS) -> list[Path]:
    """Remove all but the ``count`` most recently used exported graphs (``keep`` always
    stays); return what was removed. A graph another process still has open keeps working."""
    graphs = sorted(folder.glob("query-*.onnx"), key=_used_at, reverse=True)
    removed: list[Path] = []
    for path in [g for g in graphs if g != keep][max(0, count - 1) :]:
        try:
            path.unlink()
        except OSError:  # in use (Windows) or gone meanwhile: next time
            continue
        removed.append(path)
    return removed


def _used_at(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _graph(transformer: Any) -> Any:
    """Transformer, mean pooling over real tokens and L2 normalisation, as one module."""
    import torch

    class MeanPooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            hidden = self.transformer(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2.0, dim=1)

    return MeanPooled().eval()
