"""Query embedding on ONNX Runtime: the same model, several times faster for one short text.

A search embeds one short query and waits for it: with torch that was a good part of a
search's time, and ONNX Runtime runs the same graph several times faster on one core
(figures: docs/performance.md). The graph is
exported once from the loaded sentence-transformers model (transformer + mean pooling + L2
normalisation, the modules of the default model) into lode's cache folder, keyed by the
model files and the library versions, and reused after that. Nothing is downloaded. The
vectors equal torch's to about 1e-6 (a test checks), so queries and the documents that
torch embedded stay in one space. Any other model layout, or any failure, keeps torch.

By default the exported graph is also quantized once (int8 weights per output column,
activations quantized per token as they run: ``indexer.embed._int8``), faster still: its
vectors keep a cosine of ~0.999 to torch's, and the quality benchmark measures what that
costs in ranking (see docs/performance.md). A failure to quantize keeps the float graph.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import logging
import os
import re
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from indexer.embed._int8 import SCHEME, per_row_int8
from indexer.embed.query_graph import QueryGraph, open_session, run_graph

__all__ = [
    "KEEP_GRAPHS",
    "OnnxQueryEncoder",
    "QueryEncoder",
    "cached_query_graph",
    "cannot_export_marker",
    "exported_graph",
    "forget_graph",
    "int8_graph",
    "int8_path",
    "onnx_cache_dir",
    "onnx_query_encoder",
    "prune_onnx_cache",
    "save_query_graph",
]

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


def onnx_query_encoder(
    model: Any, model_dir: str, threads: int | None = None, *, int8: bool = False
) -> QueryEncoder | None:
    """An ONNX Runtime encoder equivalent to ``model.encode(..., normalize_embeddings=True)``
    for a transformer + mean pooling + normalize model (``int8``: its quantized graph, when
    it can be made); None when that cannot be had.

    One intra-op thread unless ``threads`` says otherwise: a second thread saves ~5 % of a
    short query's time and takes a core from the searches running beside it."""
    try:
        path = exported_graph(model, model_dir)
        if path is None:
            log.info("query embedding stays on torch: the model is not transformer + mean pooling")
            return None
        graph = _quantized_or_float(path) if int8 else path
        session = open_session(str(graph), threads or 1)
    except Exception as exc:  # any failure keeps the torch path
        log.warning("query embedding stays on torch (ONNX Runtime unavailable: %s)", exc)
        return None
    return OnnxQueryEncoder(model, session, _query_graph(model, graph, threads or 1))


def exported_graph(model: Any, model_dir: str) -> Path | None:
    """The model's float graph (transformer, mean pooling, L2 normalisation) in the cache,
    exported now if missing or damaged; None for another model layout (the export's own
    failures raise)."""
    if not _is_mean_pooled(model):
        return None
    import onnxruntime as ort

    path = _exported(model, model_dir)
    try:
        ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    except Exception:  # a damaged cached file: export it again, once
        path.unlink(missing_ok=True)
        path = _exported(model, model_dir)
    return path


def int8_graph(graph: Path) -> Path:
    """The int8 twin of an exported graph, quantized now if missing (raises when it cannot be)."""
    return _quantized(graph)


class OnnxQueryEncoder:
    """A loaded model's queries through its exported graph (``QueryEncoder``)."""

    def __init__(self, model: Any, session: Any, graph: QueryGraph | None) -> None:
        self._prepare = getattr(model, "preprocess", None) or model.tokenize  # ``tokenize`` before v6
        self._session = session
        self.graph = graph
        """What another process needs to embed queries like this without torch (None when
        the tokenizer cannot be serialised)."""

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        """The unit vectors of ``texts`` (the int8 graph scales each token on its own, so a
        text's vector does not depend on the batch it runs in)."""
        features = self._prepare(list(texts))
        return run_graph(self._session, features["input_ids"].numpy(), features["attention_mask"].numpy())


def save_query_graph(model: Any, graph: Path) -> bool:
    """Keep what embedding through ``graph`` needs besides it (the model's tokenizer and
    sequence limit) in the cache; False when that cannot be (a slow tokenizer, a full disk)."""
    return _query_graph(model, graph, 1) is not None and _manifest_path(graph).is_file()


def _query_graph(model: Any, path: Path, threads: int) -> QueryGraph | None:
    try:
        backend = getattr(getattr(model[0], "tokenizer", None), "backend_tokenizer", None)
        if backend is None:  # a slow (Python) tokenizer: other processes load the model
            return None
        graph = QueryGraph(str(path), backend.to_str(), int(model.max_seq_length), threads)
        _save_manifest(path, graph)
        return graph
    except Exception as exc:  # only costs other processes the model's memory
        log.warning("the query graph cannot be shared with other processes: %s", exc)
        return None


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
    """The cache key of a model folder's graph: its files and the exporting libraries'
    versions (read from their metadata, so a process without torch finds the graph too)."""
    root = Path(model_dir).resolve()
    versions = "|".join(importlib.metadata.version(name) for name in ("torch", "onnx"))
    digest = hashlib.sha256(f"{_FORMAT}|{versions}|{root}".encode())
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


def _manifest_path(graph: Path) -> Path:
    """Where what a query needs beside an exported graph is kept (tokenizer, sequence limit)."""
    return graph.with_name(f"{graph.name.removesuffix('.onnx')}.json")


def _save_manifest(used: Path, graph: QueryGraph) -> None:
    """Keep the tokenizer and sequence limit beside the float graph that ``used`` is (or is
    the int8 twin of), so a process that only searches needs neither torch nor the model."""
    name = used.name.split(".int8-")[0].removesuffix(".onnx") + ".onnx"
    target = _manifest_path(used.with_name(name))
    body = {"format": _FORMAT, "tokenizer": graph.tokenizer, "max_length": graph.max_length}
    try:
        if target.is_file() and json.loads(target.read_text(encoding="utf-8")) == body:
            return
        with tempfile.NamedTemporaryFile("w", dir=target.parent, suffix=".tmp", delete=False) as handle:
            json.dump(body, handle)
        os.replace(handle.name, target)
    except (OSError, ValueError) as exc:  # only costs a later CLI search the model's load
        log.warning("could not keep the query graph's tokenizer beside it: %s", exc)


def cached_query_graph(model_dir: str, *, int8: bool, threads: int = 1) -> QueryGraph | None:
    """The query graph that a process which loaded this model folder exported earlier (its
    int8 twin with ``int8``, when there is one), found without torch or the model; None
    when there is none yet (the caller loads the model, which exports it)."""
    try:
        graph = onnx_cache_dir() / f"query-{_key(model_dir)}.onnx"
        manifest = json.loads(_manifest_path(graph).read_text(encoding="utf-8"))
        if manifest.get("format") != _FORMAT or not graph.is_file():
            return None
        if int8 and int8_path(graph).is_file():
            graph = int8_path(graph)
        with contextlib.suppress(OSError):
            os.utime(graph)  # used: pruning keeps it
        return QueryGraph(str(graph), str(manifest["tokenizer"]), int(manifest["max_length"]), threads)
    except (OSError, ValueError, KeyError, TypeError, importlib.metadata.PackageNotFoundError):
        return None


def cannot_export_marker(model_dir: str) -> Path:
    """The file that says this model folder's layout cannot be exported (written when an
    export found so; keyed like its graph, so another model or library version asks again)."""
    return onnx_cache_dir() / f"query-{_key(model_dir)}.cannot"


def forget_graph(graph: Path) -> None:
    """Remove an exported graph, its int8 twin and its manifest (made again by the next export)."""
    for path in (graph, int8_path(graph), _manifest_path(graph)):
        path.unlink(missing_ok=True)


def int8_path(graph: Path) -> Path:
    """Where the quantized twin of an exported graph is kept (named for the ONNX Runtime
    version and the quantization settings, so an upgrade quantizes again)."""
    version = importlib.metadata.version("onnxruntime")
    tag = hashlib.sha256(f"{version}|{_INT8_SETTINGS}".encode()).hexdigest()[:8]
    return graph.with_name(f"{graph.name.removesuffix('.onnx')}.int8-{tag}.onnx")


def _quantized_or_float(graph: Path) -> Path:
    """The int8 twin of ``graph``, quantized now if missing; ``graph`` itself when that fails."""
    try:
        return _quantized(graph)
    except Exception as exc:  # an ONNX Runtime without its quantization tools, a full disk…
        log.warning("query embedding stays on the float graph (int8 quantization failed: %s)", exc)
        return graph


def _quantized(graph: Path) -> Path:
    import onnxruntime as ort

    target = int8_path(graph)
    if target.is_file():
        try:
            ort.InferenceSession(str(target), providers=["CPUExecutionProvider"])
        except Exception:  # damaged: quantize again
            target.unlink(missing_ok=True)
        else:
            with contextlib.suppress(OSError):
                os.utime(target)
            return target
    import onnx

    with tempfile.NamedTemporaryFile(dir=target.parent, suffix=".tmp", delete=False) as handle:
        scratch = Path(handle.name)
    try:
        log.info("quantizing the model's graph to int8 (once): %s", target)
        onnx.save(per_row_int8(onnx.load(str(graph))), str(scratch))
        ort.InferenceSession(str(scratch), providers=["CPUExecutionProvider"])  # it runs here
        os.replace(scratch, target)
    finally:
        scratch.unlink(missing_ok=True)
    prune_onnx_cache(target.parent, keep=graph)
    return target


#: Exported graphs kept in the cache (~90 MB each for the default model, plus ~23 MB for
#: its int8 twin): a new key comes with every new model, library upgrade or installation folder.
KEEP_GRAPHS = 3
_INT8_SETTINGS = f"int8 {SCHEME}"
_GRAPH = re.compile(r"query-[0-9a-f]{24}\.onnx")
#: Scratch files of an export or quantization that was killed are removed after this long.
_STALE_SCRATCH_SECONDS = 3600.0


def prune_onnx_cache(folder: Path, keep: Path, count: int = KEEP_GRAPHS) -> list[Path]:
    """Remove all but the ``count`` most recently used exported graphs (``keep`` always
    stays) with their int8 twins and manifests, twins of another ONNX Runtime or of no graph, and scratch
    files left by a killed export; return what was removed. A graph another process still
    has open keeps working."""
    every = list(folder.glob("query-*.onnx"))
    graphs = sorted((g for g in every if _GRAPH.fullmatch(g.name)), key=_used_at, reverse=True)
    doomed = [g for g in graphs if g != keep][max(0, count - 1) :]
    wanted = {g for g in graphs if g not in doomed} | {int8_path(g) for g in graphs if g not in doomed}
    doomed = [p for p in every if p not in wanted]
    doomed += [p for p in folder.glob("query-*.json") if p.with_suffix(".onnx") not in wanted]
    doomed += [p for p in folder.glob("*.tmp") if time.time() - _used_at(p) > _STALE_SCRATCH_SECONDS]
    removed: list[Path] = []
    for path in doomed:
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
