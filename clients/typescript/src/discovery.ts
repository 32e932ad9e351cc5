// Which server to talk to and with which token, as every lode client decides it:
// an explicit setting > LODE_URL / LODE_API_KEY > the discovery file a running
// `lode serve` writes (ignored when its pid is not alive) > http://127.0.0.1:7370, no token.
import { existsSync, readFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";

/** Where lode listens when nothing says otherwise. */
export const DEFAULT_URL = "http://127.0.0.1:7370";

/** The environment the resolution reads (process.env by default). */
export type Env = Readonly<Record<string, string | undefined>>;

/** The discovery file's content (`server.json`), as `lode serve` writes it. */
export interface DiscoveryFile {
  url: string;
  pid: number;
  version?: string;
  db?: string;
  auth?: "bearer" | "none";
  token_file?: string | null;
  started_at?: string;
}

/** Where the URL (and the token) came from. */
export type ServerSource = "explicit" | "env" | "discovery" | "default";

/** The server to talk to. */
export interface ServerTarget {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:7370`. */
  url: string;
  /** The bearer token, if any. */
  token?: string;
  /** Where `url` came from. */
  source: ServerSource;
  /** Where `token` came from (absent with no token). */
  tokenSource?: ServerSource;
  /** The discovery file read, if one named a live server. */
  discovery?: DiscoveryFile;
}

/** What to resolve from; every field is optional. */
export interface ResolveOptions {
  /** The URL the user set (an editor setting, a flag): wins over everything. */
  url?: string | null;
  /** The token the user set: wins over LODE_API_KEY and the discovery file. */
  token?: string | null;
  /** The environment (default: process.env). */
  env?: Env;
  /** Whether a pid is alive on this machine (default: `process.kill(pid, 0)`). */
  isAlive?: (pid: number) => boolean;
  /** The platform (default: process.platform). */
  platform?: NodeJS.Platform;
}

function nonEmpty(value: string | null | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}

function trimUrl(url: string): string {
  return url.replace(/\/+$/, "");
}

/** Whether a process with this pid runs on this machine (one of another user counts). */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The discovery file's path: $LODE_RUNTIME_DIR/server.json, else $XDG_RUNTIME_DIR/lode/server.json,
 * else platformdirs' user_runtime_dir("lode")/server.json. */
export function discoveryPath(env: Env = process.env, platform: NodeJS.Platform = process.platform): string {
  const runtime = nonEmpty(env.LODE_RUNTIME_DIR);
  if (runtime) return join(runtime, "server.json");
  const xdg = nonEmpty(env.XDG_RUNTIME_DIR);
  if (xdg && platform !== "darwin" && platform !== "win32") return join(xdg, "lode", "server.json");
  if (platform === "darwin") return join(homedir(), "Library", "Caches", "TemporaryItems", "lode", "server.json");
  if (platform === "win32") {
    const local = nonEmpty(env.LOCALAPPDATA) ?? join(homedir(), "AppData", "Local");
    return join(local, "Temp", "lode", "server.json");
  }
  const uid = typeof process.getuid === "function" ? process.getuid() : 0;
  const run = `/run/user/${uid}`;
  return existsSync(run) ? join(run, "lode", "server.json") : join(tmpdir(), `runtime-${uid}`, "lode", "server.json");
}

/** The discovery file at `path` if it is there, well formed and its pid alive; else undefined. */
export function readDiscovery(path: string, isAlive: (pid: number) => boolean = pidAlive): DiscoveryFile | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
  if (typeof parsed !== "object" || parsed === null) return undefined;
  const file = parsed as Partial<DiscoveryFile>;
  if (typeof file.url !== "string" || typeof file.pid !== "number") return undefined;
  return isAlive(file.pid) ? (file as DiscoveryFile) : undefined;
}

/** The token in a discovery file's `token_file` (its whole content, stripped), if readable. */
export function readTokenFile(path: string | null | undefined): string | undefined {
  if (!path) return undefined;
  try {
    return nonEmpty(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
}

/** The server and token to use, by lode's precedence (see the module comment). The discovery
 * file's token is used only for the discovery file's own URL: a token is never sent elsewhere. */
export function resolveServer(options: ResolveOptions = {}): ServerTarget {
  const env = options.env ?? process.env;
  const explicitUrl = nonEmpty(options.url);
  const envUrl = nonEmpty(env.LODE_URL);
  const explicitToken = nonEmpty(options.token);
  const envToken = nonEmpty(env.LODE_API_KEY);
  const needDiscovery = explicitUrl === undefined && envUrl === undefined;
  const discovery = needDiscovery
    ? readDiscovery(discoveryPath(env, options.platform ?? process.platform), options.isAlive ?? pidAlive)
    : undefined;
  let target: ServerTarget;
  if (explicitUrl !== undefined) target = { url: trimUrl(explicitUrl), source: "explicit" };
  else if (envUrl !== undefined) target = { url: trimUrl(envUrl), source: "env" };
  else if (discovery !== undefined) target = { url: trimUrl(discovery.url), source: "discovery", discovery };
  else target = { url: DEFAULT_URL, source: "default" };
  if (explicitToken !== undefined) return { ...target, token: explicitToken, tokenSource: "explicit" };
  if (envToken !== undefined) return { ...target, token: envToken, tokenSource: "env" };
  const fileToken = discovery !== undefined ? readTokenFile(discovery.token_file) : undefined;
  if (fileToken !== undefined) return { ...target, token: fileToken, tokenSource: "discovery" };
  return target;
}
