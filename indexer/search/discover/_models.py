"""What the discovery stages pass to each other (plain frozen data; JSON via msgspec)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

__all__ = [
    "AnswerPlan",
    "Bullet",
    "DiscoverMetrics",
    "DiscoverResult",
    "ProjectRef",
    "RenderedPrompt",
    "ScoredChunk",
    "ScoredProject",
    "Section",
    "cite",
]


def cite(project: str, file_path: str, start_line: int, end_line: int) -> str:
    """The citation of some lines: ``project:path:Lstart-Lend`` (unique across files)."""
    return f"{project}:{file_path}:L{start_line}-L{end_line}"


@dataclass(frozen=True, slots=True)
class ProjectRef:
    """A project as discovery sees it (the design's collection)."""

    name: str
    id: str = ""
    root: str = ""
    documents: int = 0
    chunks: int = 0
    updated_at: datetime | None = None
    tags: tuple[str, ...] = ()
    """Derived from the project's files: ``documentation``, ``code``, ``api``."""


@dataclass(frozen=True, slots=True)
class ScoredProject:
    """A project with its stage 2 score (in [0, 1]) and the parts of it."""

    project: ProjectRef
    score: float
    name_match: float = 0.0
    term_boost: float = 0.0
    signals: float = 0.0


@dataclass(frozen=True, slots=True)
class ScoredChunk:
    """One chunk of evidence with its score; ``origin`` says which stage found it."""

    project: str
    file_path: str
    content: str
    start_line: int
    end_line: int
    chunk_index: int = 0
    score: float = 0.0
    similarity: float | None = None
    """Best cosine similarity to any query (None when the chunk has no vector yet)."""
    id: str = ""
    file_id: str = ""
    project_id: str = ""
    language: str = ""
    node_type: str = ""
    node_name: str = ""
    origin: str = "broad"
    """``broad``, ``focus`` or ``context`` (a neighbour of a focused chunk)."""

    @property
    def citation(self) -> str:
        """``project:path:Lstart-Lend`` of the whole chunk."""
        return cite(self.project, self.file_path, self.start_line, self.end_line)

    @property
    def key(self) -> str:
        """Identity across stages: the chunk id, or its citation for hand-built chunks."""
        return self.id or self.citation


@dataclass(frozen=True, slots=True)
class Bullet:
    """One piece of evidence: a key sentence, or a code signature with its key lines."""

    text: str
    citation: str
    category: str
    score: float
    project: str
    file_path: str
    start_line: int
    end_line: int
    kind: str = "prose"
    """``prose`` or ``code``."""
    chunk_id: str = ""


@dataclass(frozen=True, slots=True)
class Section:
    """A section of the answer plan: the bullets of one category, best first."""

    title: str
    category: str
    priority: int
    bullets: tuple[Bullet, ...]


@dataclass(frozen=True, slots=True)
class AnswerPlan:
    """Sections in priority order, with the files they cite."""

    sections: tuple[Section, ...]
    total_bullets: int
    sources: tuple[str, ...]
    """``project:path`` of every cited file, in order of first citation."""
    omitted: int = 0
    """Bullets left out (section full, too small, or category not in the plan)."""


@dataclass(frozen=True, slots=True)
class RenderedPrompt:
    """The prompt, its size in model tokens, and what was dropped to fit the budget."""

    text: str
    format: str
    tokens: int
    max_tokens: int
    dropped_bullets: int = 0
    dropped_by_section: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DiscoverMetrics:
    """Numbers of one discovery: time per stage and the size of each step."""

    stage_ms: dict[str, float]
    total_ms: float
    projects_searched: int
    projects: tuple[str, ...]
    focus_projects: tuple[str, ...]
    queries: tuple[str, ...]
    chunks_found: int
    chunks_after_threshold: int
    chunks_after_dedup: int
    chunks_selected: int
    focus_chunks: int
    context_chunks: int
    chunks: int
    bullets: int
    prompt_tokens: int
    dropped_bullets: int


@dataclass(frozen=True, slots=True)
class DiscoverResult:
    """What ``discover`` returns: the prompt and everything it was built from."""

    question: str
    answer_prompt: str
    plan: AnswerPlan
    bullets: tuple[Bullet, ...]
    chunks: tuple[ScoredChunk, ...]
    metrics: DiscoverMetrics
    warnings: tuple[str, ...] = ()
