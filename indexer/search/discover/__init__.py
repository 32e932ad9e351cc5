"""Discovery: from a question to a cited evidence prompt, in nine stages.

1. ``filter_projects``: include/exclude globs on project names (default: all projects).
2. ``score_projects``: name match, boost terms, signals (size, recency, tags).
3. ``expand_queries``: deterministic templates from the question's main terms.
4. ``broad_discovery``: every query (embedded in one batch) across the projects, hybrid;
   similarity threshold, near-duplicate removal, MMR on embeddings.
5. ``semantic_focus``: deeper search in the top projects, reranked, with neighbour chunks.
6. ``promote_readme``: README (and top-level docs) boosted or placed first.
7. ``compress_evidence``: key sentences / code signatures, categorised, cited
   ``project:path:Lstart-Lend``.
8. ``build_answer_plan``: sections in priority order.
9. ``render_prompt``: markdown, plain or JSON within a token budget, cut at bullet boundaries.

``discover(lode, question, config)`` chains them; ``run_stage`` runs one on JSON input.
"""

from typing import TYPE_CHECKING, Any

from indexer._lazy import load_export

if TYPE_CHECKING:
    from indexer.search.discover._broad import (
        BroadResult,
        broad_discovery,
        mmr_select,
        remove_near_duplicates,
    )
    from indexer.search.discover._compress import categorize, compress_evidence
    from indexer.search.discover._config import (
        CATEGORIES,
        FORMATS,
        BroadConfig,
        CompressionConfig,
        DiscoverConfig,
        ExpansionConfig,
        FilterConfig,
        FocusConfig,
        PlanConfig,
        ReadmeConfig,
        RenderConfig,
        ScoringConfig,
        with_overrides,
    )
    from indexer.search.discover._expand import expand_queries, main_terms
    from indexer.search.discover._focus import FocusResult, context_window, rerank, semantic_focus
    from indexer.search.discover._models import (
        AnswerPlan,
        Bullet,
        DiscoverMetrics,
        DiscoverResult,
        ProjectRef,
        RenderedPrompt,
        ScoredChunk,
        ScoredProject,
        Section,
        cite,
    )
    from indexer.search.discover._pipeline import discover, focus_projects, merge_chunks
    from indexer.search.discover._plan import SECTION_TITLES, build_answer_plan
    from indexer.search.discover._projects import (
        FilteredProjects,
        filter_projects,
        project_refs,
        score_projects,
    )
    from indexer.search.discover._readme import is_readme, promote_readme
    from indexer.search.discover._render import render_prompt
    from indexer.search.discover._retrieve import Retriever
    from indexer.search.discover._stages import STAGES, run_stage
    from indexer.search.discover._terms import ENGLISH_STOPWORDS, PORTUGUESE_STOPWORDS, extract_terms

__all__ = [
    "CATEGORIES",
    "ENGLISH_STOPWORDS",
    "FORMATS",
    "PORTUGUESE_STOPWORDS",
    "SECTION_TITLES",
    "STAGES",
    "AnswerPlan",
    "BroadConfig",
    "BroadResult",
    "Bullet",
    "CompressionConfig",
    "DiscoverConfig",
    "DiscoverMetrics",
    "DiscoverResult",
    "ExpansionConfig",
    "FilterConfig",
    "FilteredProjects",
    "FocusConfig",
    "FocusResult",
    "PlanConfig",
    "ProjectRef",
    "ReadmeConfig",
    "RenderConfig",
    "RenderedPrompt",
    "Retriever",
    "ScoredChunk",
    "ScoredProject",
    "ScoringConfig",
    "Section",
    "broad_discovery",
    "build_answer_plan",
    "categorize",
    "cite",
    "compress_evidence",
    "context_window",
    "discover",
    "expand_queries",
    "extract_terms",
    "filter_projects",
    "focus_projects",
    "is_readme",
    "main_terms",
    "merge_chunks",
    "mmr_select",
    "project_refs",
    "promote_readme",
    "remove_near_duplicates",
    "render_prompt",
    "rerank",
    "run_stage",
    "score_projects",
    "semantic_focus",
    "with_overrides",
]

#: Where each public name lives; imported on first use (``lode --help`` stays light).
_EXPORTS = {
    "AnswerPlan": "indexer.search.discover._models",
    "BroadConfig": "indexer.search.discover._config",
    "BroadResult": "indexer.search.discover._broad",
    "Bullet": "indexer.search.discover._models",
    "CATEGORIES": "indexer.search.discover._config",
    "CompressionConfig": "indexer.search.discover._config",
    "DiscoverConfig": "indexer.search.discover._config",
    "DiscoverMetrics": "indexer.search.discover._models",
    "DiscoverResult": "indexer.search.discover._models",
    "ENGLISH_STOPWORDS": "indexer.search.discover._terms",
    "ExpansionConfig": "indexer.search.discover._config",
    "FORMATS": "indexer.search.discover._config",
    "FilterConfig": "indexer.search.discover._config",
    "FilteredProjects": "indexer.search.discover._projects",
    "FocusConfig": "indexer.search.discover._config",
    "FocusResult": "indexer.search.discover._focus",
    "PORTUGUESE_STOPWORDS": "indexer.search.discover._terms",
    "PlanConfig": "indexer.search.discover._config",
    "ProjectRef": "indexer.search.discover._models",
    "ReadmeConfig": "indexer.search.discover._config",
    "RenderConfig": "indexer.search.discover._config",
    "RenderedPrompt": "indexer.search.discover._models",
    "Retriever": "indexer.search.discover._retrieve",
    "SECTION_TITLES": "indexer.search.discover._plan",
    "STAGES": "indexer.search.discover._stages",
    "ScoredChunk": "indexer.search.discover._models",
    "ScoredProject": "indexer.search.discover._models",
    "ScoringConfig": "indexer.search.discover._config",
    "Section": "indexer.search.discover._models",
    "broad_discovery": "indexer.search.discover._broad",
    "build_answer_plan": "indexer.search.discover._plan",
    "categorize": "indexer.search.discover._compress",
    "cite": "indexer.search.discover._models",
    "compress_evidence": "indexer.search.discover._compress",
    "context_window": "indexer.search.discover._focus",
    "discover": "indexer.search.discover._pipeline",
    "expand_queries": "indexer.search.discover._expand",
    "extract_terms": "indexer.search.discover._terms",
    "filter_projects": "indexer.search.discover._projects",
    "focus_projects": "indexer.search.discover._pipeline",
    "is_readme": "indexer.search.discover._readme",
    "main_terms": "indexer.search.discover._expand",
    "merge_chunks": "indexer.search.discover._pipeline",
    "mmr_select": "indexer.search.discover._broad",
    "project_refs": "indexer.search.discover._projects",
    "promote_readme": "indexer.search.discover._readme",
    "remove_near_duplicates": "indexer.search.discover._broad",
    "render_prompt": "indexer.search.discover._render",
    "rerank": "indexer.search.discover._focus",
    "run_stage": "indexer.search.discover._stages",
    "score_projects": "indexer.search.discover._projects",
    "semantic_focus": "indexer.search.discover._focus",
    "with_overrides": "indexer.search.discover._config",
}


def __getattr__(name: str) -> Any:
    """Import a public name from its submodule on first use."""
    return load_export(__name__, _EXPORTS, name)
