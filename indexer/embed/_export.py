"""The model's graphs made in a child process: torch is imported there, never in the indexer.

``python -m indexer.embed._export MODEL_DIR [--int8]`` loads the sentence-transformers
model from ``MODEL_DIR``, exports its float graph with the tokenizer's manifest into lode's
cache (``onnx_queries``), quantizes its int8 twin with ``--int8``, and exits: 0 when the
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

__all__ = ["CANNOT_EXPORT", "export_in_child", "main"]

#: The child's exit status for a model whose layout the export does not handle.
CANNOT_EXPORT = 3


def export_in_child(model_dir: str, *, int8: bool) -> bool:
    """Make the model's graphs (its int8 twin too with ``int8``) in a child process; False
    when the model's layout cannot be exported; raises ``EmbedError`` when the child fails."""
    command = [sys.executable, "-m", "indexer.embed._export", model_dir, *(["--int8"] if int8 else [])]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode == CANNOT_EXPORT:
        return False
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise EmbedError(f"exporting the model's graph failed: {' '.join(said) or done.returncode}")
    return True


def main(argv: list[str]) -> int:
    """Export (and with ``--int8`` quantize) the model of ``argv[0]``; the exit status."""
    model_dir, int8 = argv[0], "--int8" in argv[1:]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from sentence_transformers import SentenceTransformer

    from indexer.embed.onnx_queries import exported_graph, int8_graph, save_query_graph

    model = SentenceTransformer(model_dir, device="cpu", local_files_only=True)
    graph = exported_graph(model, model_dir)
    if graph is None or not save_query_graph(model, graph):
        return CANNOT_EXPORT
    if int8:
        int8_graph(graph)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Exception as exc:
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(1)
