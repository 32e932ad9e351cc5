// Against live servers that tests/test_ts_client.py starts: LODE_TEST_URL (no key) with the
// fixture repository at LODE_TEST_REPO indexed as project "shop", and LODE_TEST_KEYED_URL
// (started with an API key, LODE_TEST_KEY). Skipped when they are not set.
import assert from "node:assert/strict";
import { appendFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, test } from "node:test";

import {
  createLodeClient,
  LodeBadRequestError,
  LodeConnectionError,
  LodeUnauthorizedError,
  NO_SERVER_MESSAGE,
  type FilesEvent,
  type HelloEvent,
} from "../src/index.js";

const URL_ = process.env.LODE_TEST_URL;
const KEYED = process.env.LODE_TEST_KEYED_URL;
const KEY = process.env.LODE_TEST_KEY;
const REPO = process.env.LODE_TEST_REPO;
const skip = URL_ === undefined || KEYED === undefined || KEY === undefined || REPO === undefined;
const noEnv = { env: {} };

describe("against a live lode serve", { skip: skip ? "LODE_TEST_URL etc. not set (tests/test_ts_client.py sets them)" : false }, () => {
  const url = URL_ ?? "";
  const repo = REPO ?? "";

  test("search finds apply_discount, with its uri and LSP match ranges", async () => {
    const client = createLodeClient({ ...noEnv, url });
    const found = await client.search({ query: "apply discount percentage", granularity: "chunk", limit: 3, projects: ["shop"] });
    assert.equal(found.granularity, "chunk");
    if (found.granularity !== "chunk") return;
    const hits = found.groups.flatMap((group) => group.chunks);
    const top = hits.find((hit) => hit.node_name === "apply_discount");
    assert.ok(top, JSON.stringify(hits.map((hit) => hit.node_name)));
    assert.equal(top.file_path, "src/shop/pricing.py");
    assert.equal(top.uri, pathToFileURL(join(repo, "src/shop/pricing.py")).href);
    assert.ok(top.matches.length > 0);
  });

  test("symbolAt a call site gives the definition; fileText reads the lines as indexed", async () => {
    const client = createLodeClient({ ...noEnv, url });
    const uri = pathToFileURL(join(repo, "src/shop/cart.py")).href;
    const at = await client.symbolAt({ path: uri, line: 37, column: 17 });
    assert.equal(at.name, "apply_discount");
    assert.deepEqual(at.range, { start: { line: 37, character: 15 }, end: { line: 37, character: 29 } });
    const definition = at.definitions[0];
    assert.ok(definition);
    assert.equal(definition.file_path, "src/shop/pricing.py");
    assert.equal(definition.start_line, 6);
    const text = await client.fileText({ path: definition.uri, start_line: 5, end_line: 6 });
    assert.equal(text.text, "def apply_discount(amount_cents: int, percent: int) -> int:\n");
    assert.equal(text.start_line, 5);
    assert.equal(text.end_line, 6);
    assert.match(text.content_hash, /^[0-9a-f]{64}$/);
    const refs = await client.references({ name: "apply_discount", from_path: uri });
    assert.ok(refs.callers.some((caller) => caller.file_path === "src/shop/cart.py" && caller.sites.some((site) => site.line === 38)));
  });

  test("a 400 is a LodeBadRequestError naming the field", async () => {
    const client = createLodeClient({ ...noEnv, url });
    await assert.rejects(client.symbolAt({ path: "src/shop/cart.py", line: -1, column: 0, project: "shop" }), (error: unknown) => {
      assert.ok(error instanceof LodeBadRequestError, String(error));
      assert.equal(error.status, 400);
      assert.ok(error.extra.some((field) => field.key === "line"), JSON.stringify(error.extra));
      return true;
    });
  });

  test("a wrong token is a LodeUnauthorizedError; the right one passes", async () => {
    const wrong = createLodeClient({ ...noEnv, url: KEYED, token: "not-the-key" });
    await assert.rejects(wrong.status(), (error: unknown) => {
      assert.ok(error instanceof LodeUnauthorizedError, String(error));
      assert.equal(error.status, 401);
      return true;
    });
    const right = createLodeClient({ ...noEnv, url: KEYED, token: KEY });
    assert.ok(Array.isArray((await right.status()).projects));
  });

  test("discovery: a server.json with a live pid gives the URL and the token from its token_file", async () => {
    const runtime = mkdtempSync(join(tmpdir(), "lode-runtime-"));
    const tokenFile = join(runtime, "token");
    writeFileSync(tokenFile, `${KEY}\n`, { mode: 0o600 });
    const server = { url: KEYED, pid: process.pid, version: "0.1.0", db: "/x", auth: "bearer", token_file: tokenFile, started_at: "2026-11-28T05:50:00Z" };
    writeFileSync(join(runtime, "server.json"), JSON.stringify(server));
    const client = createLodeClient({ env: { LODE_RUNTIME_DIR: runtime } });
    assert.equal(client.url, KEYED);
    assert.equal(client.target.source, "discovery");
    assert.ok(Array.isArray((await client.status()).projects));
    // a dead pid: the file is ignored, the default URL is tried
    writeFileSync(join(runtime, "server.json"), JSON.stringify({ ...server, pid: 2 ** 22 + 17 }));
    assert.equal(createLodeClient({ env: { LODE_RUNTIME_DIR: runtime } }).target.source, "default");
  });

  test("nothing listening is a LodeConnectionError with the one line to show", async () => {
    const client = createLodeClient({ ...noEnv, url: "http://127.0.0.1:9" });
    await assert.rejects(client.status(), (error: unknown) => {
      assert.ok(error instanceof LodeConnectionError, String(error));
      assert.ok(error.message.startsWith(NO_SERVER_MESSAGE));
      return true;
    });
  });

  test("the event stream says hello, then which file was written after it is saved", async () => {
    const client = createLodeClient({ ...noEnv, url });
    const controller = new AbortController();
    let hello: HelloEvent | undefined;
    const written = new Promise<FilesEvent>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no files event within 60 s")), 60_000);
      const subscription = client.subscribe({
        project: "shop",
        signal: controller.signal,
        onOpen: () => undefined,
        onEvent: (event) => {
          if (event.event === "hello") {
            hello = event.data;
            appendFileSync(join(repo, "src/shop/pricing.py"), "\n\ndef loyalty_bonus(points: int) -> int:\n    return points // 10\n");
          } else if (event.event === "files" && event.data.paths.includes("src/shop/pricing.py")) {
            clearTimeout(timer);
            resolve(event.data);
          }
        },
        onError: (error, willRetry) => {
          if (!willRetry) reject(error instanceof Error ? error : new Error(String(error)));
        },
      });
      void subscription.done;
    });
    try {
      const files = await written;
      assert.ok(hello);
      assert.ok(hello.kinds.includes("files"));
      assert.deepEqual(files.paths, ["src/shop/pricing.py"]);
    } finally {
      controller.abort();
    }
    const found = await client.symbols({ name: "loyalty_bonus", project: "shop" });
    assert.equal(found.symbols[0]?.file_path, "src/shop/pricing.py");
  });
});
