// lode's errors as classes: every answer lode refuses carries one JSON body,
// {status_code, detail, extra}, and becomes a LodeApiError (a subclass per status);
// a server that does not answer at all is a LodeConnectionError.
//
//   LodeError
//   ├── LodeConnectionError      nothing answered at the URL (no server running?)
//   └── LodeApiError             lode answered with an error body
//       ├── LodeBadRequestError      400: `extra` names the offending fields
//       ├── LodeUnauthorizedError    401: missing or wrong API key
//       ├── LodeForbiddenError       403: a browser request refused
//       ├── LodeNotFoundError        404: unknown id, project or file
//       ├── LodeConflictError        409: clash with the current state
//       └── LodeUnavailableError     503: the index is unusable
import type { components } from "./generated/schema.js";

/** lode's error body, as the OpenAPI document states it. */
export type ErrorBody = components["schemas"]["ErrorOut"];
/** One offending field of a 400 (`extra[]`). */
export type ErrorField = components["schemas"]["ErrorFieldOut"];

/** The one line a client prints when no server answers (the discovery spec's wording). */
export const NO_SERVER_MESSAGE = "lode: no server running — start one with `lode serve <folder>` (or `lode service install`)";

/** The root of every error this package throws. */
export class LodeError extends Error {
  override name = "LodeError";
}

/** Nothing answered at the server's URL: the message is the one line to show the user. */
export class LodeConnectionError extends LodeError {
  override name = "LodeConnectionError";
  constructor(
    /** The URL that did not answer. */
    readonly url: string,
    options?: { cause?: unknown },
  ) {
    super(`${NO_SERVER_MESSAGE} (nothing answers at ${url})`, options);
  }
}

/** lode answered with an error: its status, its `detail` and the fields `extra` names. */
export class LodeApiError extends LodeError {
  override name = "LodeApiError";
  /** The HTTP status (the body's `status_code`). */
  readonly status: number;
  /** What went wrong, in words. */
  readonly detail: string;
  /** For a 400, the offending fields; otherwise empty. */
  readonly extra: ErrorField[];
  /** The operation that failed, e.g. `GET /api/v1/symbols/at`. */
  readonly operation: string;

  constructor(status: number, body: ErrorBody, operation: string) {
    super(`${operation}: ${status} ${body.detail}`);
    this.status = status;
    this.detail = body.detail;
    this.extra = body.extra ?? [];
    this.operation = operation;
  }

  /** The message `extra` gives for a field (e.g. `line`), if it names it. */
  fieldMessage(key: string): string | undefined {
    return this.extra.find((field) => field.key === key)?.message;
  }
}

/** 400: a field is invalid; `extra` names it. */
export class LodeBadRequestError extends LodeApiError {
  override name = "LodeBadRequestError";
}
/** 401: the API key is missing or wrong. */
export class LodeUnauthorizedError extends LodeApiError {
  override name = "LodeUnauthorizedError";
}
/** 403: a browser request was refused (Host or Origin). */
export class LodeForbiddenError extends LodeApiError {
  override name = "LodeForbiddenError";
}
/** 404: an unknown id, project or file. */
export class LodeNotFoundError extends LodeApiError {
  override name = "LodeNotFoundError";
}
/** 409: the request clashes with the current state. */
export class LodeConflictError extends LodeApiError {
  override name = "LodeConflictError";
}
/** 503: the index is unusable; `detail` says why. */
export class LodeUnavailableError extends LodeApiError {
  override name = "LodeUnavailableError";
}

const BY_STATUS: Record<number, typeof LodeApiError> = {
  400: LodeBadRequestError,
  401: LodeUnauthorizedError,
  403: LodeForbiddenError,
  404: LodeNotFoundError,
  409: LodeConflictError,
  503: LodeUnavailableError,
};

function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== "object" || value === null) return false;
  const body = value as Record<string, unknown>;
  return typeof body.status_code === "number" && typeof body.detail === "string";
}

/** The typed error for a failed answer: lode's body when it sent one, else the status text. */
export function toLodeError(response: Response, body: unknown, operation: string): LodeApiError {
  const errorBody: ErrorBody = isErrorBody(body)
    ? body
    : { status_code: response.status, detail: typeof body === "string" && body ? body : response.statusText || "error", extra: null };
  const Class = BY_STATUS[response.status] ?? LodeApiError;
  return new Class(response.status, errorBody, operation);
}
