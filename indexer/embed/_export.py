"""The model's graphs made in a child process: torch is imported there, never in the indexer.

``export_in_child`` runs ``main`` in a child process, which loads the sentence-transformers
model from its folder, exports its float graph with the tokenizer's manifest into lode's
cache (``onnx_queries``), quantizes its int8 twin when asked, and exits: 0 when the
files are there, ``CANNOT_EXPORT`` when the model's layout cannot be exported (another
pooling, a prompt, a slow tokenizer), 1 on any other failure (said on stderr). A process
that embeds documents on the graph then never holds torch's ~400 MB (its libraries and the
model's float weights) for what it only needed once.
"""

from __future__ import annotations

import os
import subprocess
import sys

from indexer.errors import EmbedError

__all__ = ["CANNOT_EXPORT", "EXPORT_SECONDS", "export_in_child", "main"]

#: The child's exit status for a model whose layout the export does not handle.
CANNOT_EXPORT = 3


#: How long an export may take (torch's import and the export run ~20-60 s on a laptop).
EXPORT_SECONDS = 900.0
#: The child's own code: ``-P`` and the cache folder as its working directory keep the
#: indexed project's files (a top-level ``indexer/`` of its own) off its import path.
_CHILD = "import sys; from indexer.embed._export import main; sys.exit(main(sys.argv[1:]))"


def export_in_child(model_dir: str, *, int8: str | None = None) -> bool:
    """Make the model's graphs in a child process, with its int8 twin when ``int8`` is
    ``required`` (a failure to quantize fails) or ``wanted`` (a failure leaves the float
    graph alone); False when the model's layout cannot be exported (remembered, so later
    loads do not ask again); raises ``EmbedError`` when the child fails."""
    from indexer.embed.onnx_queries import cannot_export_marker, onnx_cache_dir

    folder = onnx_cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-P", "-c", _CHILD, model_dir, *([f"--int8={int8}"] if int8 else [])]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, check=False, cwd=folder, timeout=EXPORT_SECONDS
        )
    except subprocess.TimeoutExpired as exc:
        raise EmbedError(f"exporting the model's graph took more than {EXPORT_SECONDS:.0f} s") from exc
    if done.returncode == CANNOT_EXPORT:
        marker = cannot_export_marker(model_dir)
        marker.write_text("the model's layout cannot be exported\n", encoding="utf-8")
        return False
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise EmbedError(f"exporting the model's graph failed: {' '.join(said) or done.returncode}")
    return True


def main(argv: list[str]) -> int:
    """Export the model of ``argv[0]`` (``--int8=required|wanted``: quantize it too); the
    exit status."""
    model_dir = argv[0]
    int8 = next((a.split("=", 1)[1] for a in argv[1:] if a.startswith("--int8=")), None)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        from sentence_transformers import SentenceTransformer

        from indexer.embed.onnx_queries import exported_graph, int8_graph, save_query_graph

        model = SentenceTransformer(model_dir, device="cpu", local_files_only=True)
        graph = exported_graph(model, model_dir)
        if graph is None or not save_query_graph(model, graph):
            return CANNOT_EXPORT
    except Exception as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    if int8:
        try:
            int8_graph(graph)
        except Exception as exc:  # queries keep the float graph unless documents need int8
            print(f"int8 quantization failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1 if int8 == "required" else 0
    return 0
