// Go to definition and find references for the word at a position, through lode's
// /api/v1/symbols/at and /api/v1/symbols/references; locations as plain data.
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

import type { LodeClient, Range } from "@lode/client";

/** The text of a file's 0-based `line`, or undefined when it cannot be read. */
export type LineReader = (uri: string, line: number) => Promise<string | undefined>;

/** Lines read from the local file a file:// URI names (each file read once per reader). */
export function fileLineReader(): LineReader {
  const files = new Map<string, Promise<string[] | undefined>>();
  return async (uri, line) => {
    let lines = files.get(uri);
    if (lines === undefined) {
      lines = readFile(fileURLToPath(uri), "utf8").then(
        (text) => text.split(/\r?\n/),
        () => undefined,
      );
      files.set(uri, lines);
    }
    return (await lines)?.[line];
  };
}

/** The UTF-16 range of `name` on `text` (JavaScript strings count UTF-16 units, as LSP
 * does): the name as a whole word first, then anywhere; undefined when it is not there. */
export function nameRange(text: string, line: number, name: string): Range | undefined {
  if (name === "") return undefined;
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const word = new RegExp(`(?<![\\p{L}\\p{N}_])${escaped}(?![\\p{L}\\p{N}_])`, "u").exec(text);
  const at = word !== null ? word.index : text.indexOf(name);
  if (at < 0) return undefined;
  return { start: { line, character: at }, end: { line, character: at + name.length } };
}

/** A place in a file: its URI and an LSP range. */
export interface Location {
  uri: string;
  range: Range;
}

/** A position in LSP terms: 0-based line, UTF-16 column. */
export interface Position {
  line: number;
  character: number;
}

/** Definitions of the identifier at `position` in the file at `uri`, nearest first;
 * empty when there is no identifier there or lode knows no definition. */
export async function definitionsAt(
  client: LodeClient,
  uri: string,
  position: Position,
  signal?: AbortSignal,
  readLine: LineReader = fileLineReader(),
): Promise<Location[]> {
  const at = await client.symbolAt({ path: uri, line: position.line, column: position.character }, { signal });
  if (at.name === "") return [];
  return Promise.all(at.definitions.map((definition) => nameLocation(definition.uri, definition.start_line, at.name, readLine)));
}

/** A definition's place: the name's range on its first line when the line holds it (a
 * decorator's line does not), else the line's start. */
async function nameLocation(uri: string, oneBasedLine: number, name: string, readLine: LineReader): Promise<Location> {
  const place = lineLocation(uri, oneBasedLine);
  const text = await readLine(uri, place.range.start.line);
  const range = text === undefined ? undefined : nameRange(text, place.range.start.line, name);
  return range === undefined ? place : { uri, range };
}

/** Every use of the identifier at `position` (its callers' lines, nearest to this file first),
 * and, when `includeDeclaration`, its definitions before them. */
export async function referencesAt(
  client: LodeClient,
  uri: string,
  position: Position,
  includeDeclaration = true,
  signal?: AbortSignal,
): Promise<Location[]> {
  const at = await client.symbolAt({ path: uri, line: position.line, column: position.character }, { signal });
  if (at.name === "") return [];
  const found = await client.references({ name: at.name, from_path: uri, project: at.project_id }, { signal });
  const uses: Location[] = [];
  for (const caller of found.callers) {
    for (const site of caller.sites) {
      const line = site.line - 1;
      const ranges = site.ranges.length > 0 ? site.ranges : [{ start: { line, character: 0 }, end: { line, character: 0 } }];
      for (const range of ranges) uses.push({ uri: caller.uri, range });
    }
  }
  if (!includeDeclaration) return dedupe(uses);
  // a definition's line is often a site too (with the name's exact range): keep the site's
  const lines = new Set(uses.map((use) => `${use.uri}:${use.range.start.line}`));
  const definitions = found.definitions
    .map((definition) => lineLocation(definition.uri, definition.start_line))
    .filter((location) => !lines.has(`${location.uri}:${location.range.start.line}`));
  return dedupe([...definitions, ...uses]);
}

function lineLocation(uri: string, oneBasedLine: number): Location {
  const line = Math.max(0, oneBasedLine - 1);
  return { uri, range: { start: { line, character: 0 }, end: { line, character: 0 } } };
}

function dedupe(locations: Location[]): Location[] {
  const seen = new Set<string>();
  return locations.filter((location) => {
    const key = `${location.uri}:${location.range.start.line}:${location.range.start.character}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
