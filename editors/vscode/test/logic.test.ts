// The extension's logic without a server: settings, result rows, the status bar, the debounce.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { createLodeClient, LodeConnectionError, NO_SERVER_MESSAGE, StreamRefusedError, type SearchResponse, type Task } from "@lode/client";

import { LiveSearch, type Clock } from "../src/liveSearch.js";
import { fileLineReader, nameRange } from "../src/navigation.js";
import { toResultItems } from "../src/results.js";
import { clientFor, DEFAULT_SETTINGS, providesFor, readSettings, rediscover } from "../src/settings.js";
import { failed, INITIAL_STATUS, opened, reduceStatus, statusView } from "../src/status.js";

test("settings: defaults for what is unset or mistyped, numbers clamped, blank means unset", () => {
  assert.deepEqual(readSettings(() => undefined), DEFAULT_SETTINGS);
  const set: Record<string, unknown> = { serverUrl: " http://127.0.0.1:7400/ ", token: "k", fallbackLanguages: ["go", 3, ""], searchDebounceMs: -5, searchLimit: "9" };
  const settings = readSettings((key) => set[key]);
  assert.deepEqual(settings, { serverUrl: "http://127.0.0.1:7400/", token: "k", fallbackLanguages: ["go"], searchDebounceMs: 0, searchLimit: 30 });
  const client = clientFor(settings, {});
  assert.deepEqual(client.target, { url: "http://127.0.0.1:7400", source: "explicit", token: "k", tokenSource: "explicit" });
  const fromEnv = clientFor(DEFAULT_SETTINGS, { LODE_URL: "http://localhost:7500", LODE_API_KEY: "e" });
  assert.deepEqual(fromEnv.target, { url: "http://localhost:7500", source: "env", token: "e", tokenSource: "env" });
  assert.equal(providesFor(settings, "go"), true);
  assert.equal(providesFor(settings, "python"), false);
  assert.equal(providesFor({ ...settings, fallbackLanguages: ["*"] }, "python"), true);
});

function hit(name: string, score: number, extra: Partial<Record<string, unknown>> = {}): Record<string, unknown> {
  return {
    id: name, file_id: "f", file_path: `src/${name}.py`, project_id: "p", project: "shop", chunk_index: 0,
    content: `\n    def ${name}(x):\n        return x\n`, start_line: 10, end_line: 12, language: "python",
    node_type: "function", node_name: name, parent_context: "", scope_path: [], relevance_score: score, role: "source",
    unit_start_line: 10, unit_end_line: 12, uri: `file:///r/src/${name}.py`, matches: [], folded_pieces: 0, ...extra,
  };
}

test("result rows: best first, a codicon per kind, the first match as the place to jump", () => {
  const match = { start: { line: 10, character: 8 }, end: { line: 10, character: 11 } };
  const response = {
    granularity: "chunk", query: "q", mode: "hybrid", offset: 0, limit: 10, total: 2, has_more: false,
    semantic_coverage: {}, warnings: [], took_ms: 1,
    groups: [
      { file_id: "a", file_path: "src/low.py", project_id: "p", project: "shop", total_relevance: 0.2, uri: "file:///r/src/low.py", chunks: [hit("low", 0.2)] },
      { file_id: "b", file_path: "src/high.py", project_id: "p", project: "shop", total_relevance: 0.9, uri: "file:///r/src/high.py", chunks: [hit("high", 0.9, { matches: [match], node_type: "class" })] },
    ],
  } as unknown as SearchResponse;
  const items = toResultItems(response);
  assert.deepEqual(items.map((item) => [item.label, item.description, item.detail]), [
    ["$(symbol-class) high", "src/high.py:10", "def high(x):"],
    ["$(symbol-function) low", "src/low.py:10", "def low(x):"],
  ]);
  assert.deepEqual(items[0]?.range, match);
  assert.deepEqual(items[1]?.range, { start: { line: 9, character: 0 }, end: { line: 9, character: 0 } });
});

function task(id: string, status: Task["status"], percent: number, phase: Task["phase"] = "chunk"): Task {
  return {
    id, project_id: "p", kind: "index", status, phase, paths: [], full: true, files_total: 10, files_done: Math.round(percent / 10),
    chunks_done: 0, chunks_total: 0, chunks_embedded: 0, percent, errors: [], message: "", searchable: false, embedded: false,
  };
}

test("status bar: progress while a task runs, coverage below 100 %, the no-server line", () => {
  let state = opened(INITIAL_STATUS);
  assert.equal(statusView(state).text, "$(search) lode");
  state = reduceStatus(state, { event: "task", data: task("t1", "running", 46.7) });
  assert.equal(statusView(state).text, "$(sync~spin) lode indexing 46%");
  state = reduceStatus(state, { event: "task", data: task("t2", "queued", 0) });
  assert.equal(statusView(state).text, "$(sync~spin) lode indexing 46% (+1)");
  state = reduceStatus(state, { event: "task", data: task("t1", "running", 80, "embed") });
  assert.equal(statusView(state).text, "$(sync~spin) lode embedding 80% (+1)");
  state = reduceStatus(state, { event: "task", data: task("t1", "done", 100, "done") });
  state = reduceStatus(state, { event: "task", data: task("t2", "cancelled", 0, "cancelled") });
  state = reduceStatus(state, { event: "coverage", data: { project_id: "p", chunks_total: 10, chunks_embedded: 4, semantic_coverage: 0.4 } });
  assert.equal(statusView(state).text, "$(search) lode 40%");
  const down = failed(state, new LodeConnectionError("http://127.0.0.1:7370"));
  assert.equal(statusView(down).tooltip, NO_SERVER_MESSAGE);
  const refused = failed(state, new StreamRefusedError(new Response(null, { status: 401 }), { detail: "missing or wrong API key" }));
  assert.equal(statusView(refused).tooltip, "lode: missing or wrong API key");
  assert.equal(statusView(opened(refused)).tooltip, "lode: 40% of chunks have a vector (searches are lexical for the rest)");
});

class FakeClock implements Clock {
  now = 0;
  private timers: Array<{ at: number; callback: () => void; id: number }> = [];
  private next = 0;
  setTimeout(callback: () => void, ms: number): unknown {
    this.next += 1;
    this.timers.push({ at: this.now + ms, callback, id: this.next });
    return this.next;
  }
  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((timer) => timer.id !== handle);
  }
  advance(ms: number): void {
    this.now += ms;
    const due = this.timers.filter((timer) => timer.at <= this.now);
    this.timers = this.timers.filter((timer) => timer.at > this.now);
    for (const timer of due) timer.callback();
  }
}

test("live search: keystrokes within the wait send one search, a short query clears the results", async () => {
  const sent: string[] = [];
  const fetch = async (request: Request | URL | string): Promise<Response> => {
    const body = (await (request as Request).json()) as { query: string };
    sent.push(body.query);
    return Response.json({ granularity: "chunk", query: body.query, mode: "hybrid", offset: 0, limit: 5, total: 0, has_more: false, semantic_coverage: {}, warnings: [], took_ms: 1, groups: [] });
  };
  const client = createLodeClient({ env: {}, url: "http://127.0.0.1:9", fetch: fetch as typeof globalThis.fetch });
  const clock = new FakeClock();
  const results: string[] = [];
  const live = new LiveSearch(client, { debounceMs: 150, limit: 5, clock, onResults: (_items, query) => results.push(query), onError: (error) => assert.fail(String(error)) });
  for (const text of ["a", "ap", "app", "appl", "apply"]) {
    live.update(text);
    clock.advance(40);
  }
  assert.deepEqual(sent, []);
  clock.advance(150);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(sent, ["apply"]);
  assert.deepEqual(results, ["a", "apply"]); // "a" is too short: cleared at once
  live.update("x");
  assert.deepEqual(results, ["a", "apply", "x"]);
  live.dispose();
});

test("rediscover: a server that announces itself after the client was made is picked up; an explicit URL stays", () => {
  const runtime = mkdtempSync(join(tmpdir(), "lode-runtime-"));
  const env = { LODE_RUNTIME_DIR: runtime };
  const first = clientFor(DEFAULT_SETTINGS, env);
  assert.equal(first.target.source, "default");
  assert.equal(rediscover(first, DEFAULT_SETTINGS, env), undefined);
  writeFileSync(join(runtime, "server.json"), JSON.stringify({ url: "http://127.0.0.1:7411", pid: process.pid, auth: "none", token_file: null }));
  const moved = rediscover(first, DEFAULT_SETTINGS, env);
  assert.equal(moved?.target.url, "http://127.0.0.1:7411");
  assert.equal(moved?.target.source, "discovery");
  assert.equal(rediscover(moved!, DEFAULT_SETTINGS, env), undefined);
  const pinned = { ...DEFAULT_SETTINGS, serverUrl: "http://127.0.0.1:7370" };
  assert.equal(rediscover(clientFor(pinned, env), pinned, env), undefined);
});

test("a definition's name range: a whole word first, UTF-16 columns, none when absent", async () => {
  const range = (start: number, end: number) => ({ start: { line: 2, character: start }, end: { line: 2, character: end } });
  assert.deepEqual(nameRange("def forget_get(get): return get", 2, "get"), range(15, 18));
  assert.deepEqual(nameRange("s = \"é😀\"; fn émoji() {}", 2, "émoji"), range(14, 19)); // 😀 is two units
  assert.deepEqual(nameRange("x = a.b-c", 2, "b-c"), range(6, 9));
  assert.equal(nameRange("@property", 2, "size"), undefined);
  const dir = mkdtempSync(join(tmpdir(), "lode-lines-"));
  writeFileSync(join(dir, "a.py"), "one\r\ntwo\n");
  const read = fileLineReader();
  const uri = new URL(`file://${join(dir, "a.py")}`).toString();
  assert.deepEqual([await read(uri, 0), await read(uri, 1), await read(uri, 5)], ["one", "two", undefined]);
  assert.equal(await read(new URL(`file://${join(dir, "gone.py")}`).toString(), 0), undefined);
});
