/** JSON requests to the Agent Server's custom routes, with the reviewer's bearer token. */
import { apiUrl } from "../config";
import { describeError } from "./errors";

export class ApiError extends Error {
  readonly status: number;
  readonly text: string;

  constructor(status: number, text: string) {
    super(`HTTP ${status}`);
    this.name = "ApiError";
    this.status = status;
    this.text = text;
  }
}

export function authHeaders(token: string | null): Record<string, string> {
  return token ? { Authorization: `Bearer ${token}` } : {};
}

export async function getJson(
  path: string,
  token: string | null,
  init: { signal?: AbortSignal; base?: string } = {},
): Promise<unknown> {
  return requestJson("GET", path, token, undefined, init);
}

/** POST a JSON body (e.g. LangGraph's `/assistants/search`); the answer's JSON, or an `ApiError`. */
export async function postJson(
  path: string,
  token: string | null,
  body: unknown,
  init: { signal?: AbortSignal; base?: string } = {},
): Promise<unknown> {
  return requestJson("POST", path, token, body, init);
}

async function requestJson(
  method: "GET" | "POST",
  path: string,
  token: string | null,
  body: unknown,
  init: { signal?: AbortSignal; base?: string },
): Promise<unknown> {
  const headers: Record<string, string> = { Accept: "application/json", ...authHeaders(token) };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(`${(init.base ?? apiUrl()).replace(/\/$/, "")}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: init.signal,
  });
  if (!response.ok) throw new ApiError(response.status, await response.text());
  return response.json();
}

export { describeError };
