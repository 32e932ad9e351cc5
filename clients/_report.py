"""What one tool said about the document or a generated client, counted."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Report"]


@dataclass(frozen=True)
class Report:
    """One tool's run: its errors and its warnings, one line each, and its whole output."""

    #: What ran, e.g. ``redocly lint`` or ``openapi-typescript: tsc --strict``.
    tool: str
    #: One line per error the tool reported.
    errors: tuple[str, ...] = ()
    #: One line per warning the tool reported.
    warnings: tuple[str, ...] = ()
    #: Everything it printed (for when the lines above are not enough).
    output: str = ""
    #: Warnings about the tool itself, not the document (listed in the tool's module).
    ignored: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        """No error and no warning."""
        return not self.errors and not self.warnings

    def summary(self) -> str:
        """``tool: N errors, M warnings``."""
        return f"{self.tool}: {len(self.errors)} errors, {len(self.warnings)} warnings"

    def render(self, limit: int = 60) -> str:
        """The summary, then each error and warning (the first ``limit`` of each)."""
        lines = [self.summary()]
        kinds = (("error", self.errors), ("warning", self.warnings), ("ignored", self.ignored))
        for kind, items in kinds:
            lines += [f"  {kind}: {item}" for item in items[:limit]]
            if len(items) > limit:
                lines.append(f"  … and {len(items) - limit} more ({kind})")
        return "\n".join(lines)
