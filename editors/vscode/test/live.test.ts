// The extension's logic against a live lode serve that tests/test_vscode_extension.py starts:
// LODE_TEST_URL with the fixture repository at LODE_TEST_REPO indexed as project "shop".
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, test } from "node:test";
import { pathToFileURL } from "node:url";

import { createLodeClient, type LodeEvent } from "@lode/client";

import { LiveSearch } from "../src/liveSearch.js";
import { definitionsAt, referencesAt } from "../src/navigation.js";
import type { ResultItem } from "../src/results.js";
import { clientFor, readSettings } from "../src/settings.js";
import { INITIAL_STATUS, opened, reduceStatus, statusView } from "../src/status.js";

const URL_ = process.env.LODE_TEST_URL;
const REPO = process.env.LODE_TEST_REPO;
const skip = URL_ === undefined || REPO === undefined ? "LODE_TEST_URL and LODE_TEST_REPO not set (tests/test_vscode_extension.py sets them)" : false;

describe("the extension's logic against a live lode serve", { skip }, () => {
  const repo = REPO ?? "";
  const settings = readSettings((key) => ({ serverUrl: URL_ })[key as "serverUrl"]);
  const client = clientFor(settings, {});
  const uri = (path: string): string => pathToFileURL(join(repo, path)).href;

  test("typing a query searches once after the pause and lists apply_discount at its match", async () => {
    const answers: Array<[string, ResultItem[]]> = [];
    const done = new Promise<void>((resolve, reject) => {
      const live = new LiveSearch(client, {
        debounceMs: 50,
        limit: 10,
        onResults: (items, query) => {
          answers.push([query, items]);
          if (query !== "") resolve();
        },
        onError: reject,
      });
      for (const text of ["ap", "apply", "apply disc", "apply discount"]) live.update(text);
      setTimeout(() => reject(new Error("no results in 30 s")), 30_000).unref();
    });
    await done;
    const searched = answers.filter(([query]) => query !== "");
    assert.deepEqual(searched.map(([query]) => query), ["apply discount"]);
    const items = searched[0]?.[1] ?? [];
    const item = items.find((candidate) => candidate.label.endsWith(" apply_discount"));
    assert.ok(item, JSON.stringify(items.map((candidate) => candidate.label)));
    assert.equal(item.uri, uri("src/shop/pricing.py"));
    assert.equal(item.description, "src/shop/pricing.py:6");
    assert.equal(item.detail, "def apply_discount(amount_cents: int, percent: int) -> int:");
    assert.equal(item.range.start.line >= 5, true);
  });

  test("go to definition from a call site lands on the def line", async () => {
    const found = await definitionsAt(client, uri("src/shop/cart.py"), { line: 37, character: 20 });
    // the name's range on its line (read from the file: the symbol index keeps lines only)
    assert.deepEqual(found[0], { uri: uri("src/shop/pricing.py"), range: { start: { line: 5, character: 4 }, end: { line: 5, character: 18 } } });
    assert.deepEqual(await definitionsAt(client, uri("src/shop/cart.py"), { line: 37, character: 0 }), []); // indentation: no identifier
  });

  test("find references lists the call in cart.py with the name's exact range", async () => {
    const found = await referencesAt(client, uri("src/shop/pricing.py"), { line: 5, character: 6 }, true);
    const call = { uri: uri("src/shop/cart.py"), range: { start: { line: 37, character: 15 }, end: { line: 37, character: 29 } } };
    assert.ok(found.some((location) => JSON.stringify(location) === JSON.stringify(call)), JSON.stringify(found));
    const withoutDeclaration = await referencesAt(client, uri("src/shop/pricing.py"), { line: 5, character: 6 }, false);
    assert.ok(withoutDeclaration.every((location) => !(location.uri === uri("src/shop/pricing.py") && location.range.start.character === 0)));
  });

  test("the status bar shows a re-index's progress from the event stream, then settles", async () => {
    const status = await client.status();
    const project = status.projects.find((candidate) => candidate.name === "shop");
    assert.ok(project);
    const texts: string[] = [];
    let state = INITIAL_STATUS;
    const controller = new AbortController();
    let taskId: string | undefined;
    await new Promise<void>((resolve, reject) => {
      setTimeout(() => reject(new Error(`the task did not end in 60 s: ${JSON.stringify(texts)}`)), 60_000).unref();
      client.subscribe({
        signal: controller.signal,
        onOpen: () => {
          state = opened(state);
          texts.push(statusView(state).text);
          const live = createLodeClient({ env: {}, url: URL_ });
          live.api
            .POST("/api/v1/projects/{project_id}/index", { params: { path: { project_id: project.id } }, body: { full: true } })
            .then((answer) => {
              taskId = answer.data?.id;
            }, reject);
        },
        onEvent: (event: LodeEvent) => {
          state = reduceStatus(state, event);
          texts.push(statusView(state).text);
          if (event.event === "task" && event.data.id === taskId && event.data.status === "done") resolve();
        },
        onError: (error, willRetry) => {
          if (!willRetry) reject(error);
        },
      });
    }).finally(() => controller.abort());
    assert.equal(texts[0], "$(search) lode");
    assert.ok(texts.some((text) => text.startsWith("$(sync~spin) lode ")), JSON.stringify(texts));
    // settled: no spinner once the task is done (a coverage figure may still follow it)
    assert.match(texts.at(-1) ?? "", /^\$\(search\) lode( \d+%)?$/);
  });
});
