// The client: openapi-fetch over the generated `paths`, the server and token resolved as lode's
// clients do, every failure thrown as a typed error, and named methods for an editor's calls.
import createClient, { type Client } from "openapi-fetch";

import { resolveServer, type ResolveOptions, type ServerTarget } from "./discovery.js";
import { LodeConnectionError, toLodeError } from "./errors.js";
import { followStream, type SubscribeOptions, type Subscription } from "./events.js";
import type { components, operations, paths } from "./generated/schema.js";

type Schemas = components["schemas"];
type Query<Op extends keyof operations> = operations[Op]["parameters"]["query"];

export type SearchRequest = Schemas["SearchRequest"];
export type SearchResponse = Schemas["ChunkSearchOut"] | Schemas["DocumentSearchOut"];
export type ChunkHit = Schemas["ChunkHitOut"];
export type DocumentHit = Schemas["DocumentHitOut"];
export type SymbolAt = Schemas["SymbolAtOut"];
export type SymbolInfo = Schemas["SymbolOut"];
export type SymbolList = Schemas["SymbolListOut"];
export type References = Schemas["ReferencesOut"];
export type FileText = Schemas["FileTextOut"];
export type Task = Schemas["TaskOut"];
export type Status = Schemas["StatusOut"];
export type Project = Schemas["ProjectOut"];
export type ProjectCreated = Schemas["ProjectCreated"];
export type Health = Schemas["HealthOut"];
export type Range = Schemas["RangeOut"];
export type Position = Schemas["PositionOut"];

/** How to reach the server: everything optional (see `resolveServer`). */
export interface LodeClientOptions extends ResolveOptions {
  /** The fetch to use (default: the global one). */
  fetch?: typeof globalThis.fetch;
}

/** Per call: an AbortSignal (a search box typing on cancels the search it no longer needs). */
export interface CallOptions {
  signal?: AbortSignal;
}

/** What openapi-fetch answers. */
interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** A lode server: `api` is the generated client for any route; the methods throw LodeError. */
export class LodeClient {
  /** The generated client (openapi-fetch over `paths`), authenticated, for any route. */
  readonly api: Client<paths>;
  /** Where the server is and which token is sent. */
  readonly target: ServerTarget;
  private readonly fetcher: typeof globalThis.fetch;

  constructor(options: LodeClientOptions = {}) {
    this.target = resolveServer(options);
    this.fetcher = options.fetch ?? globalThis.fetch;
    const fetcher = this.fetcher;
    const url = this.target.url;
    this.api = createClient<paths>({
      baseUrl: url,
      headers: this.headers(),
      fetch: async (request: Request) => {
        try {
          return await fetcher(request);
        } catch (error) {
          throw connectionError(error, url);
        }
      },
    });
  }

  /** The base URL, e.g. `http://127.0.0.1:7370`. */
  get url(): string {
    return this.target.url;
  }

  /** The headers every request carries (the bearer token when there is one). */
  headers(): Record<string, string> {
    return this.target.token ? { Authorization: `Bearer ${this.target.token}` } : {};
  }

  /** The server's health (needs no token). */
  async health(options: CallOptions = {}): Promise<Health> {
    return must("GET /health", await this.api.GET("/health", { signal: options.signal }));
  }

  /** Projects, tasks, index sizes, the model. */
  async status(options: CallOptions = {}): Promise<Status> {
    return must("GET /api/v1/status", await this.api.GET("/api/v1/status", { signal: options.signal }));
  }

  /** Register a folder (its index is queued at once). */
  async createProject(body: Schemas["ProjectCreate"], options: CallOptions = {}): Promise<ProjectCreated> {
    return must("POST /api/v1/projects", await this.api.POST("/api/v1/projects", { body, signal: options.signal }));
  }

  /** One task's progress. */
  async task(taskId: string, options: CallOptions = {}): Promise<Task> {
    const params = { path: { task_id: taskId } };
    return must("GET /api/v1/tasks/{task_id}", await this.api.GET("/api/v1/tasks/{task_id}", { params, signal: options.signal }));
  }

  /** Search (hybrid by default): `groups` of chunks at chunk granularity, `documents` at document granularity. */
  async search(body: SearchRequest, options: CallOptions = {}): Promise<SearchResponse> {
    return must("POST /api/v1/search", await this.api.POST("/api/v1/search", { body, signal: options.signal }));
  }

  /** The symbol at an LSP position of a file (a path or `file://` URI): its definitions nearest first. */
  async symbolAt(query: Query<"symbol_at">, options: CallOptions = {}): Promise<SymbolAt> {
    const params = { query };
    return must("GET /api/v1/symbols/at", await this.api.GET("/api/v1/symbols/at", { params, signal: options.signal }));
  }

  /** Definitions of a name. */
  async symbols(query: Query<"find_symbols">, options: CallOptions = {}): Promise<SymbolList> {
    const params = { query };
    return must("GET /api/v1/symbols", await this.api.GET("/api/v1/symbols", { params, signal: options.signal }));
  }

  /** Every line using a name, grouped by caller, nearest to `from_path` first. */
  async references(query: Query<"find_references">, options: CallOptions = {}): Promise<References> {
    const params = { query };
    const answer = await this.api.GET("/api/v1/symbols/references", { params, signal: options.signal });
    return must("GET /api/v1/symbols/references", answer);
  }

  /** Lines of an indexed file (0-based, end exclusive) and the file's content hash. */
  async fileText(query: Query<"read_text">, options: CallOptions = {}): Promise<FileText> {
    const params = { query };
    return must("GET /api/v1/files/text", await this.api.GET("/api/v1/files/text", { params, signal: options.signal }));
  }

  /** Follow the event stream (tasks' progress, files written, coverage, versions), re-opened after a drop. */
  subscribe(options: SubscribeOptions): Subscription {
    const url = new URL(`${this.target.url}/api/v1/events`);
    if (options.project !== undefined) url.searchParams.set("project", options.project);
    const headers = { Accept: "text/event-stream", ...this.headers() };
    const fetcher = this.fetcher;
    const target = this.target.url;
    return followStream(async (signal) => {
      try {
        return await fetcher(url, { headers, signal });
      } catch (error) {
        if (signal.aborted) throw error;
        throw connectionError(error, target);
      }
    }, options);
  }
}

/** A client for the server lode's precedence picks (explicit > env > discovery file > default). */
export function createLodeClient(options: LodeClientOptions = {}): LodeClient {
  return new LodeClient(options);
}

function connectionError(error: unknown, url: string): unknown {
  if (error instanceof Error && error.name === "AbortError") return error;
  return new LodeConnectionError(url, { cause: error });
}

/** The answer's data, or its error thrown typed. */
export function must<T>(operation: string, answer: Answer<T>): T {
  if (answer.response.ok && answer.data !== undefined) return answer.data;
  throw toLodeError(answer.response, answer.error, operation);
}
