// What needs no server: the event-stream parser, the server's resolution, errors typed from bodies.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import {
  DEFAULT_URL,
  LodeBadRequestError,
  LodeUnauthorizedError,
  followStream,
  parseEventStream,
  resolveServer,
  toLodeError,
  type LodeEvent,
  type SseMessage,
} from "../src/index.js";

function streamOf(pieces: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const piece of pieces) controller.enqueue(encoder.encode(piece));
      controller.close();
    },
  });
}

async function collect(pieces: string[]): Promise<SseMessage[]> {
  const messages: SseMessage[] = [];
  for await (const message of parseEventStream(streamOf(pieces))) messages.push(message);
  return messages;
}

test("the parser joins data lines, skips comments and takes any line ending, split anywhere", async () => {
  const text = "\ufeff: keep-alive\r\nevent: task\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\nevent:files\ndata:x\nid: 7\n\ndata: plain\r\rretry: 250\nevent: version\ndata: {}\n\n";
  const whole = await collect([text]);
  const bytes = await collect(text.split("")); // one character at a time: \r and \n arrive apart
  assert.deepEqual(whole, [
    { event: "task", data: '{"a":\n1}' },
    { event: "files", data: "x", id: "7" },
    { event: "message", data: "plain", id: "7" },
    { event: "version", data: "{}", id: "7", retry: 250 },
  ]);
  assert.deepEqual(bytes, whole);
});

test("a message the stream cut before its blank line is dropped", async () => {
  assert.deepEqual(await collect(["event: task\ndata: {}\n\nevent: files\ndata: {"]), [{ event: "task", data: "{}" }]);
});

test("followStream re-opens a dropped stream and stops at a 401", async () => {
  const answers = [
    new Response("event: version\ndata: {\"version\": 1}\n\n", { status: 200 }),
    new Response("event: version\ndata: {\"version\": 2}\n\n", { status: 200 }),
    new Response(JSON.stringify({ status_code: 401, detail: "missing or wrong API key", extra: null }), { status: 401 }),
  ];
  const events: LodeEvent[] = [];
  const errors: Array<[string, boolean]> = [];
  let opened = 0;
  const subscription = followStream(
    async () => {
      const answer = answers[opened];
      opened += 1;
      if (answer === undefined) throw new Error("opened too often");
      return answer;
    },
    {
      retryMs: 1,
      onEvent: (event) => events.push(event),
      onError: (error, willRetry) => errors.push([error instanceof Error ? error.message : String(error), willRetry]),
    },
  );
  await subscription.done;
  assert.deepEqual(events, [
    { event: "version", data: { version: 1 } },
    { event: "version", data: { version: 2 } },
  ]);
  assert.deepEqual(errors, [
    ["the event stream ended", true],
    ["the event stream ended", true],
    ["GET /api/v1/events: 401", false],
  ]);
});

test("the server: explicit > LODE_URL/LODE_API_KEY > a live discovery file > the default", () => {
  const runtime = mkdtempSync(join(tmpdir(), "lode-runtime-"));
  const tokenFile = join(runtime, "token");
  writeFileSync(tokenFile, "file-token\n");
  const server = { url: "http://127.0.0.1:9999/", pid: 4242, auth: "bearer", token_file: tokenFile };
  writeFileSync(join(runtime, "server.json"), JSON.stringify(server));
  const alive = (pid: number): boolean => pid === 4242;
  const env = { LODE_RUNTIME_DIR: runtime };
  const base = { env, isAlive: alive };

  assert.deepEqual(resolveServer({ ...base, env: {}, isAlive: () => false }), { url: DEFAULT_URL, source: "default" });
  const found = resolveServer(base);
  assert.equal(found.url, "http://127.0.0.1:9999");
  assert.equal(found.source, "discovery");
  assert.equal(found.token, "file-token");
  assert.equal(found.tokenSource, "discovery");
  // a dead pid: the file is ignored
  assert.deepEqual(resolveServer({ env, isAlive: () => false }), { url: DEFAULT_URL, source: "default" });
  // the environment wins over the file, and the file's token is not sent to another URL
  const fromEnv = resolveServer({ ...base, env: { ...env, LODE_URL: "http://localhost:1234" } });
  assert.deepEqual(fromEnv, { url: "http://localhost:1234", source: "env" });
  const envToken = resolveServer({ ...base, env: { ...env, LODE_API_KEY: "env-token" } });
  assert.equal(envToken.url, "http://127.0.0.1:9999");
  assert.equal(envToken.token, "env-token");
  assert.equal(envToken.tokenSource, "env");
  // an explicit setting wins over both
  const explicit = resolveServer({ ...base, env: { ...env, LODE_URL: "http://x:1", LODE_API_KEY: "e" }, url: "http://y:2", token: "t" });
  assert.deepEqual(explicit, { url: "http://y:2", source: "explicit", token: "t", tokenSource: "explicit" });
  // blank settings count as unset
  assert.equal(resolveServer({ ...base, url: "  ", token: "" }).source, "discovery");
});

test("the discovery file's place: LODE_RUNTIME_DIR, else XDG_RUNTIME_DIR/lode", () => {
  const alive = (): boolean => true;
  const runtime = mkdtempSync(join(tmpdir(), "lode-xdg-"));
  mkdirSync(join(runtime, "lode"));
  writeFileSync(join(runtime, "lode", "server.json"), JSON.stringify({ url: "http://127.0.0.1:7400", pid: 1 }));
  const found = resolveServer({ env: { XDG_RUNTIME_DIR: runtime }, isAlive: alive, platform: "linux" });
  assert.equal(found.url, "http://127.0.0.1:7400");
  assert.equal(found.token, undefined);
});

test("errors are typed by status from lode's body", () => {
  const body = { status_code: 400, detail: "line: must be >= 0 (got -1)", extra: [{ key: "line", message: "must be >= 0 (got -1)", source: "query" }] };
  const error = toLodeError(new Response(null, { status: 400 }), body, "GET /api/v1/symbols/at");
  assert.ok(error instanceof LodeBadRequestError);
  assert.equal(error.status, 400);
  assert.equal(error.fieldMessage("line"), "must be >= 0 (got -1)");
  assert.equal(error.message, "GET /api/v1/symbols/at: 400 line: must be >= 0 (got -1)");
  const bare = toLodeError(new Response(null, { status: 401, statusText: "Unauthorized" }), undefined, "GET /x");
  assert.ok(bare instanceof LodeUnauthorizedError);
  assert.equal(bare.detail, "Unauthorized");
});
