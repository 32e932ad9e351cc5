// The status bar's text from lode's event stream: indexing progress of the tasks running,
// semantic coverage, or what is wrong (no server, a wrong token).
import { LodeConnectionError, NO_SERVER_MESSAGE, StreamRefusedError, type LodeEvent, type Task } from "@lode/client";

/** What the status bar knows. */
export interface StatusState {
  /** The stream is open. */
  connected: boolean;
  /** Live tasks by id (queued or running). */
  tasks: ReadonlyMap<string, Task>;
  /** Semantic coverage by project id, in [0, 1]. */
  coverage: ReadonlyMap<string, number>;
  /** The last problem, one line (cleared when the stream opens). */
  problem?: string;
}

/** The status bar's item: its text (with codicons) and its tooltip. */
export interface StatusView {
  text: string;
  tooltip: string;
}

/** Before anything is known. */
export const INITIAL_STATUS: StatusState = { connected: false, tasks: new Map(), coverage: new Map() };

/** The stream opened. */
export function opened(state: StatusState): StatusState {
  const { problem: _dropped, ...rest } = state;
  return { ...rest, connected: true };
}

/** The state after one event. */
export function reduceStatus(state: StatusState, event: LodeEvent): StatusState {
  switch (event.event) {
    case "task": {
      const tasks = new Map(state.tasks);
      if (event.data.status === "queued" || event.data.status === "running") tasks.set(event.data.id, event.data);
      else tasks.delete(event.data.id);
      return { ...state, tasks };
    }
    case "coverage": {
      const coverage = new Map(state.coverage);
      coverage.set(event.data.project_id, event.data.semantic_coverage);
      return { ...state, coverage };
    }
    default:
      return state;
  }
}

/** The state after the stream failed: the one line to show. */
export function failed(state: StatusState, error: unknown): StatusState {
  return { ...state, connected: false, tasks: new Map(), problem: describeError(error) };
}

/** One line for an error: the no-server line, lode's detail for a refusal, else the message. */
export function describeError(error: unknown): string {
  if (error instanceof LodeConnectionError) return NO_SERVER_MESSAGE;
  if (error instanceof StreamRefusedError) {
    const body = error.body as { detail?: unknown } | undefined;
    const detail = typeof body?.detail === "string" ? body.detail : `HTTP ${error.response.status}`;
    return `lode: ${detail}`;
  }
  if (error instanceof Error) return error.message.startsWith("lode") ? error.message : `lode: ${error.message}`;
  return `lode: ${String(error)}`;
}

function phaseWord(task: Task): string {
  if (task.status === "queued") return "queued";
  return task.phase === "embed" ? "embedding" : "indexing";
}

/** The status bar's text and tooltip for a state. */
export function statusView(state: StatusState): StatusView {
  if (!state.connected) {
    return { text: "$(search) lode $(debug-disconnect)", tooltip: state.problem ?? "lode: connecting…" };
  }
  const tasks = [...state.tasks.values()];
  if (tasks.length > 0) {
    const running = tasks.find((task) => task.status === "running") ?? tasks[0]!;
    const percent = Math.floor(running.percent);
    const more = tasks.length > 1 ? ` (+${tasks.length - 1})` : "";
    const lines = tasks.map((task) => `${phaseWord(task)} ${task.files_done}/${task.files_total} files, ${Math.floor(task.percent)}%`);
    return { text: `$(sync~spin) lode ${phaseWord(running)} ${percent}%${more}`, tooltip: lines.join("\n") };
  }
  const coverage = [...state.coverage.values()];
  const low = coverage.length > 0 ? Math.min(...coverage) : 1;
  if (low < 1) {
    return { text: `$(search) lode ${Math.floor(low * 100)}%`, tooltip: `lode: ${Math.floor(low * 100)}% of chunks have a vector (searches are lexical for the rest)` };
  }
  return { text: "$(search) lode", tooltip: "lode: up to date" };
}
