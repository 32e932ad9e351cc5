// The extension's settings (package.json `contributes.configuration`), read and checked
// without `vscode`: extension.ts passes a getter over `workspace.getConfiguration("lode")`.
import { createLodeClient, type Env, type LodeClient } from "@lode/client";

/** What the user set, each with its default filled in. */
export interface LodeSettings {
  /** `lode.serverUrl`: "" means the environment, the discovery file, then the default. */
  serverUrl: string;
  /** `lode.token`: "" means LODE_API_KEY, then the discovery file's token file. */
  token: string;
  /** `lode.fallbackLanguages`: languages whose Go to Definition / Find References lode answers. */
  fallbackLanguages: string[];
  /** `lode.searchDebounceMs`: the search box's wait after a keystroke. */
  searchDebounceMs: number;
  /** `lode.searchLimit`: how many results the search box shows. */
  searchLimit: number;
}

/** Each setting's default (the same as package.json's; a test holds them together). */
export const DEFAULT_SETTINGS: Readonly<LodeSettings> = Object.freeze({
  serverUrl: "",
  token: "",
  fallbackLanguages: [],
  searchDebounceMs: 150,
  searchLimit: 30,
});

/** The setting keys under the `lode.` section, as package.json contributes them. */
export const SETTING_KEYS = Object.freeze(Object.keys(DEFAULT_SETTINGS)) as readonly (keyof LodeSettings)[];

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value));
}

/** The settings from a getter (`key` without the `lode.` prefix); a value of the wrong type
 * falls back to its default, a number out of range is clamped. */
export function readSettings(get: (key: string) => unknown): LodeSettings {
  const text = (key: "serverUrl" | "token"): string => {
    const value = get(key);
    return typeof value === "string" ? value.trim() : DEFAULT_SETTINGS[key];
  };
  const number = (key: "searchDebounceMs" | "searchLimit", low: number, high: number): number => {
    const value = get(key);
    return typeof value === "number" && Number.isFinite(value) ? clamp(Math.round(value), low, high) : DEFAULT_SETTINGS[key];
  };
  const languages = get("fallbackLanguages");
  return {
    serverUrl: text("serverUrl"),
    token: text("token"),
    fallbackLanguages: Array.isArray(languages) ? languages.filter((l): l is string => typeof l === "string" && l !== "") : [],
    searchDebounceMs: number("searchDebounceMs", 0, 2000),
    searchLimit: number("searchLimit", 1, 100),
  };
}

/** A client for these settings: a setting given wins, then LODE_URL / LODE_API_KEY, then the
 * discovery file, then http://127.0.0.1:7370 (`@lode/client`'s `resolveServer`). */
export function clientFor(settings: LodeSettings, env?: Env): LodeClient {
  return createLodeClient({ url: settings.serverUrl, token: settings.token, ...(env ? { env } : {}) });
}

/** Whether lode answers VS Code's Go to Definition / Find References for this language. */
export function providesFor(settings: LodeSettings, languageId: string): boolean {
  return settings.fallbackLanguages.includes("*") || settings.fallbackLanguages.includes(languageId);
}

/** A new client when the server lode's precedence picks now differs from `current`'s (a server
 * started, or restarted on another port, since: its discovery file says where); else undefined. */
export function rediscover(current: LodeClient, settings: LodeSettings, env?: Env): LodeClient | undefined {
  const next = clientFor(settings, env);
  const same = next.target.url === current.target.url && next.target.token === current.target.token;
  return same ? undefined : next;
}
