// An editor plugin's first calls, written against the client generated from lode's OpenAPI
// document (openapi-typescript's `paths` + openapi-fetch) and compiled with tsc --strict:
// register a folder, follow its task, search, find a symbol and its references, read a
// range. Usage: node live.js BASE_URL FOLDER. Prints one JSON line of what it found; any
// call that fails ends it with the HTTP status and lode's error body.
// (python -m clients copies it beside the generated schema.ts; tests/test_clients.py runs it.)
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

type ChunkHit = components["schemas"]["ChunkHitOut"];
type Task = components["schemas"]["TaskOut"];

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

function must<T>(what: string, answer: Answer<T>): T {
  if (answer.data === undefined) {
    throw new Error(`${what}: HTTP ${answer.response.status} ${JSON.stringify(answer.error)}`);
  }
  return answer.data;
}

async function main(baseUrl: string, folder: string): Promise<void> {
  const api = createClient<paths>({ baseUrl });

  // 1. register the folder; its index task is queued at once
  const created = must("create_project", await api.POST("/api/v1/projects", { body: { path: folder, name: "shop" } }));
  const projectId = created.project.id;

  // 2. follow the task to its end
  let polls = 0;
  let task: Task;
  const deadline = Date.now() + 60_000;
  do {
    if (polls > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    polls += 1;
    task = must("get_task", await api.GET("/api/v1/tasks/{task_id}", { params: { path: { task_id: created.task_id } } }));
  } while ((task.status === "queued" || task.status === "running") && Date.now() < deadline);

  // 3. search with only the fields an editor sets: every other one keeps its default
  const found = must(
    "search",
    await api.POST("/api/v1/search", {
      body: { query: "apply discount percentage", granularity: "chunk", limit: 3, languages: ["python"] },
    }),
  );
  if (found.granularity !== "chunk") throw new Error(`search: asked for chunks, got ${found.granularity}`);
  const hits: ChunkHit[] = found.groups.flatMap((group) => group.chunks);
  hits.sort((a, b) => b.relevance_score - a.relevance_score);
  const top = hits[0];

  // 4. the symbol's definition and its references
  const symbols = must(
    "find_symbols",
    await api.GET("/api/v1/symbols", { params: { query: { name: "apply_discount", project: "shop" } } }),
  );
  const references = must(
    "find_references",
    await api.GET("/api/v1/symbols/references", { params: { query: { name: "apply_discount", project: "shop" } } }),
  );

  // 5. read the definition's lines
  const definition = symbols.symbols[0];
  const read = must(
    "read_range",
    await api.GET("/api/v1/projects/{project_id}/documents/{document_id}", {
      params: {
        path: { project_id: projectId, document_id: `${definition.file_path}/text` },
        query: { start_line: definition.start_line, end_line: definition.end_line },
      },
    }),
  );

  const report = {
    project_id: projectId,
    task: { status: task.status, polls },
    top_hit: top === undefined ? null : { file_path: top.file_path, node_name: top.node_name, start_line: top.start_line },
    symbols: symbols.symbols.map((s) => ({ file_path: s.file_path, name: s.name, kind: s.kind, start_line: s.start_line })),
    references: references.callers.flatMap((caller) =>
      caller.sites.map((site) => ({ file_path: caller.file_path, line: site.line, text: site.text })),
    ),
    range: read.text == null ? null : { start_line: read.text.start_line, end_line: read.text.end_line, text: read.text.text },
  };
  process.stdout.write(JSON.stringify(report) + "\n");
}

const [baseUrl, folder] = process.argv.slice(2);
if (baseUrl === undefined || folder === undefined) {
  process.stderr.write("usage: node live.js BASE_URL FOLDER\n");
  process.exit(2);
}
main(baseUrl, folder).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
