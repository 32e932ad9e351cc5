// lode's event stream (GET /api/v1/events, server-sent events) read with fetch: node has no
// EventSource, and EventSource cannot send the bearer token. The stream is parsed as the
// HTML standard's "event stream interpretation" says, and re-opened after a drop.
import type { components } from "./generated/schema.js";

/** One message of an event stream, before its data is parsed. */
export interface SseMessage {
  /** The `event:` field (`message` when none was sent). */
  event: string;
  /** The `data:` lines joined by newlines. */
  data: string;
  /** The last `id:` seen, if any. */
  id?: string;
  /** A `retry:` the server sent with this message, in ms. */
  retry?: number;
}

/** The first event: what this server streams. */
export interface HelloEvent {
  read_only: boolean;
  kinds: string[];
  project_id: string | null;
  version: number | null;
}
/** Files of a project were written (searchable now) or removed. */
export interface FilesEvent {
  project_id: string;
  paths: string[];
}
/** A project's share of chunks with a vector changed. */
export interface CoverageEvent {
  project_id: string;
  chunks_total: number;
  chunks_embedded: number;
  semantic_coverage: number;
}
/** The index answered from has a new version. */
export interface VersionEvent {
  version: number;
}
/** The client read too slowly and missed events: re-read what it shows. */
export interface LaggedEvent {
  dropped: number;
}

/** An event of lode's stream with its data parsed (docs/http-api.md, "Events"). The data of
 * every kind but `task` is typed by hand: the OpenAPI document gives the stream as text. */
export type LodeEvent =
  | { event: "hello"; data: HelloEvent }
  | { event: "task"; data: components["schemas"]["TaskOut"] }
  | { event: "files"; data: FilesEvent }
  | { event: "coverage"; data: CoverageEvent }
  | { event: "version"; data: VersionEvent }
  | { event: "lagged"; data: LaggedEvent };

/** Split a byte stream into event-stream messages (comments and unknown fields skipped). */
export async function* parseEventStream(stream: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder("utf-8");
  const reader = stream.getReader();
  let buffer = "";
  let event = "";
  let data: string[] = [];
  let id: string | undefined;
  let retry: number | undefined;
  let first = true;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      if (first && buffer.length > 0) {
        if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1);
        first = false;
      }
      let match: RegExpExecArray | null;
      const lineEnd = /\r\n|\r|\n/g;
      let consumed = 0;
      while ((match = lineEnd.exec(buffer)) !== null) {
        // a lone \r at the buffer's end may be the first half of \r\n: wait for more
        if (match[0] === "\r" && match.index === buffer.length - 1 && !done) break;
        const line = buffer.slice(consumed, match.index);
        consumed = match.index + match[0].length;
        if (line === "") {
          if (data.length > 0) {
            const message: SseMessage = { event: event || "message", data: data.join("\n") };
            if (id !== undefined) message.id = id;
            if (retry !== undefined) message.retry = retry;
            yield message;
          }
          event = "";
          data = [];
          retry = undefined;
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "event") event = value;
        else if (field === "data") data.push(value);
        else if (field === "id" && !value.includes("\0")) id = value;
        else if (field === "retry" && /^\d+$/.test(value)) retry = Number(value);
      }
      buffer = buffer.slice(consumed);
      if (done) return; // a message not ended by a blank line is dropped, as the standard says
    }
  } finally {
    reader.releaseLock();
  }
}

/** How to follow the stream. */
export interface SubscribeOptions {
  /** Only events of this project (id or name). */
  project?: string;
  /** Called with each event lode sends (kinds this package does not know are skipped). */
  onEvent: (event: LodeEvent) => void;
  /** Called each time the stream (re)opens. */
  onOpen?: () => void;
  /** Called when the stream fails; `willRetry` says whether it is opened again. */
  onError?: (error: unknown, willRetry: boolean) => void;
  /** Stops the subscription when aborted. */
  signal?: AbortSignal;
  /** First wait before re-opening a dropped stream, ms (default 500); doubles up to `maxRetryMs`. */
  retryMs?: number;
  /** Longest wait between attempts, ms (default 15000). */
  maxRetryMs?: number;
}

/** A running subscription. */
export interface Subscription {
  /** Stop following the stream. */
  close(): void;
  /** Settles when the subscription has stopped (closed, aborted, or a refusal not worth retrying). */
  readonly done: Promise<void>;
}

const KINDS = new Set(["hello", "task", "files", "coverage", "version", "lagged"]);

/** Decode one message into a LodeEvent (undefined for kinds this package does not know). */
export function toLodeEvent(message: SseMessage): LodeEvent | undefined {
  if (!KINDS.has(message.event)) return undefined;
  return { event: message.event, data: JSON.parse(message.data) } as LodeEvent;
}

/** Why the stream could not be opened: an HTTP answer other than 200 (a 401, a 404 project). */
export class StreamRefusedError extends Error {
  override name = "StreamRefusedError";
  constructor(
    readonly response: Response,
    readonly body: unknown,
  ) {
    super(`GET /api/v1/events: ${response.status}`);
  }
}

/** One attempt: open the stream with `open` and deliver its events until it ends. */
export type OpenStream = (signal: AbortSignal) => Promise<Response>;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Follow an event stream: open it, deliver its events, re-open it after a drop or a network
 * error (backing off), and stop on `close()`, on the signal, or on a 4xx answer (a wrong token or
 * an unknown project does not get better by retrying). */
export function followStream(open: OpenStream, options: SubscribeOptions): Subscription {
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  if (options.signal?.aborted) stop();
  options.signal?.addEventListener("abort", stop, { once: true });
  const first = options.retryMs ?? 500;
  const longest = options.maxRetryMs ?? 15_000;
  const run = async (): Promise<void> => {
    let wait = first;
    while (!controller.signal.aborted) {
      try {
        const response = await open(controller.signal);
        if (!response.ok || response.body === null) {
          const text = await response.text().catch(() => "");
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON: keep the text
          }
          const retry = response.status >= 500;
          options.onError?.(new StreamRefusedError(response, body), retry);
          if (!retry) return;
        } else {
          options.onOpen?.();
          wait = first;
          for await (const message of parseEventStream(response.body)) {
            if (message.retry !== undefined) wait = message.retry;
            const event = toLodeEvent(message);
            if (event !== undefined) options.onEvent(event);
          }
          if (!controller.signal.aborted) options.onError?.(new Error("the event stream ended"), true);
        }
      } catch (error) {
        if (controller.signal.aborted) return;
        options.onError?.(error, true);
      }
      await sleep(wait, controller.signal);
      wait = Math.min(wait * 2, longest);
    }
  };
  const done = run().finally(() => options.signal?.removeEventListener("abort", stop));
  return { close: stop, done };
}
