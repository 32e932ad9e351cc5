// Search results as the quick pick shows them: plain data, mapped onto vscode types by extension.ts.
import type { ChunkHit, Range, SearchResponse } from "@lode/client";

/** One row of the search box. */
export interface ResultItem {
  /** The unit's name (or the file's name), with a codicon for its kind. */
  label: string;
  /** `path:line`, and the project when results span several. */
  description: string;
  /** The unit's first non-blank line. */
  detail: string;
  /** The file's `file://` URI. */
  uri: string;
  /** Where to put the cursor and what to highlight (LSP: 0-based, UTF-16 columns, end exclusive). */
  range: Range;
  /** The whole chunk, for a preview. */
  preview: string;
  /** The hit's score in [0, 1]. */
  score: number;
}

const ICONS: Record<string, string> = {
  function: "symbol-function",
  method: "symbol-method",
  constructor: "symbol-constructor",
  class: "symbol-class",
  struct: "symbol-struct",
  enum: "symbol-enum",
  interface: "symbol-interface",
  trait: "symbol-interface",
  impl: "symbol-class",
  module: "symbol-module",
  namespace: "symbol-namespace",
  type: "symbol-type-parameter",
  constant: "symbol-constant",
  variable: "symbol-variable",
  macro: "symbol-misc",
  test: "beaker",
  section: "symbol-key",
};

function firstLine(text: string): string {
  const line = text.split("\n").find((l) => l.trim() !== "") ?? "";
  const trimmed = line.trim();
  return trimmed.length > 120 ? `${trimmed.slice(0, 119)}…` : trimmed;
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** Where a hit puts the cursor: its first match (a word of the query) if any, else its first line. */
export function hitRange(hit: ChunkHit): Range {
  const first = hit.matches[0];
  if (first !== undefined) return first;
  const line = Math.max(0, hit.start_line - 1);
  return { start: { line, character: 0 }, end: { line, character: 0 } };
}

/** One item per chunk hit, best first (chunk granularity); one per file, on its best chunk
 * (document granularity). */
export function toResultItems(response: SearchResponse): ResultItem[] {
  const hits: ChunkHit[] =
    response.granularity === "chunk"
      ? response.groups.flatMap((group) => group.chunks)
      : response.documents.flatMap((document) => document.chunks.slice(0, 1));
  const projects = new Set(hits.map((hit) => hit.project));
  return hits
    .slice()
    .sort((a, b) => b.relevance_score - a.relevance_score)
    .map((hit) => {
      const icon = ICONS[hit.node_type] ?? "file-code";
      const name = hit.node_name || basename(hit.file_path);
      const where = `${hit.file_path}:${hit.start_line}`;
      return {
        label: `$(${icon}) ${name}`,
        description: projects.size > 1 ? `${where} · ${hit.project}` : where,
        detail: firstLine(hit.content),
        uri: hit.uri,
        range: hitRange(hit),
        preview: hit.content,
        score: hit.relevance_score,
      };
    });
}
