// Results as you type: each keystroke restarts a short wait; when it runs out the query is sent,
// the search still running for an older query is aborted (lode cancels it server-side), and an
// answer that arrives for a query no longer current is dropped.
import type { LodeClient, SearchRequest } from "@lode/client";

import { toResultItems, type ResultItem } from "./results.js";

/** A timer to wait with: the real one, or a test's. */
export interface Clock {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** The real clock. */
export const SYSTEM_CLOCK: Clock = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** How the search box searches. */
export interface LiveSearchOptions {
  /** Wait after a keystroke, ms. */
  debounceMs: number;
  /** Results to ask for. */
  limit: number;
  /** The fields every search carries besides `query` (e.g. `projects`). */
  request?: Omit<SearchRequest, "query" | "limit">;
  /** Shortest query searched (shorter ones clear the results). */
  minLength?: number;
  /** The clock (default: the real one). */
  clock?: Clock;
  /** Called with the results of the current query. */
  onResults: (items: ResultItem[], query: string) => void;
  /** Called when a search for the current query fails. */
  onError: (error: unknown, query: string) => void;
  /** Called when a search starts (true) and when the current one ends (false). */
  onBusy?: (busy: boolean) => void;
}

/** The search box's engine: call `update` with the box's text on each change. */
export class LiveSearch {
  private timer: unknown;
  private inFlight: AbortController | undefined;
  private generation = 0;
  /** How many searches were sent (a test counts them). */
  sent = 0;
  private readonly clock: Clock;

  constructor(
    private readonly client: LodeClient,
    private readonly options: LiveSearchOptions,
  ) {
    this.clock = options.clock ?? SYSTEM_CLOCK;
  }

  /** The box's text changed: search for it once the user pauses. */
  update(text: string): void {
    const query = text.trim();
    this.generation += 1;
    const generation = this.generation;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    if (query.length < (this.options.minLength ?? 2)) {
      this.abort();
      this.options.onResults([], query);
      return;
    }
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      void this.run(query, generation);
    }, this.options.debounceMs);
  }

  /** Stop: no timer left, the running search aborted, nothing more reported. */
  dispose(): void {
    this.generation += 1;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.abort();
  }

  private abort(): void {
    this.inFlight?.abort();
    this.inFlight = undefined;
  }

  private async run(query: string, generation: number): Promise<void> {
    this.abort();
    const controller = new AbortController();
    this.inFlight = controller;
    this.sent += 1;
    this.options.onBusy?.(true);
    try {
      const body: SearchRequest = { granularity: "chunk", ...this.options.request, query, limit: this.options.limit };
      const response = await this.client.search(body, { signal: controller.signal });
      if (generation === this.generation) this.options.onResults(toResultItems(response), query);
    } catch (error) {
      if (generation === this.generation && !controller.signal.aborted) this.options.onError(error, query);
    } finally {
      if (this.inFlight === controller) {
        this.inFlight = undefined;
        this.options.onBusy?.(false);
      }
    }
  }
}
