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
  const response = await fetch(`${(init.base ?? apiUrl()).replace(/\/$/, "")}${path}`, {
    headers: { Accept: "application/json", ...authHeaders(token) },
    signal: init.signal,
  });
  if (!response.ok) throw new ApiError(response.status, await response.text());
  return response.json();
}

export { describeError };
