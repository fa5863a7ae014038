/**
 * The agents the server serves, discovered from LangGraph's `POST /assistants/search` (one system
 * assistant per graph of `langgraph.json`), never listed in the app. Read once per signed-in token
 * and kept for the session; a failure is not kept, so `retry` (or the next page) asks again.
 */
import { useCallback, useEffect, useState } from "react";
import { ApiError, describeError, postJson } from "../api/http";
import { apiUrl } from "../config";
import { isRecord } from "../interrupts/guards";

export type ServedAgents =
  | { status: "loading" }
  | { status: "ready"; agents: readonly string[] }
  | { status: "failed"; error: string };

export type AgentsView = ServedAgents & { retry: () => void };

/** Assistants asked for per request; more pages are read until one comes back short. */
export const SEARCH_PAGE = 100;

/** The served graphs among `/assistants/search`'s answer: the system assistants' graph ids, once each, sorted. */
export function servedAgentsOf(assistants: readonly unknown[]): string[] {
  const graphs = new Set<string>();
  for (const assistant of assistants) {
    if (!isRecord(assistant) || !isRecord(assistant.metadata)) continue;
    if (assistant.metadata.created_by !== "system") continue;
    if (typeof assistant.graph_id === "string" && assistant.graph_id) graphs.add(assistant.graph_id);
  }
  return [...graphs].sort();
}

/** What went wrong reading the agents, in words for the person signed in. */
export function agentsProblem(error: unknown, base: string): string {
  if (error instanceof ApiError && error.status === 401) {
    return `The server refused your token (${describeError(error)}): sign out and sign in with a token it knows.`;
  }
  if (error instanceof TypeError) {
    return `The server at ${base} did not answer (${error.message}): is it running?`;
  }
  return `Cannot read the agents the server serves: ${describeError(error)}`;
}

async function searchServedAgents(token: string, base: string): Promise<readonly string[]> {
  const assistants: unknown[] = [];
  for (let offset = 0; ; offset += SEARCH_PAGE) {
    const page = await postJson(
      "/assistants/search",
      token,
      { metadata: { created_by: "system" }, limit: SEARCH_PAGE, offset },
      { base },
    );
    if (!Array.isArray(page)) throw new Error("/assistants/search did not answer a list of assistants");
    assistants.push(...page);
    if (page.length < SEARCH_PAGE) return servedAgentsOf(assistants);
  }
}

const settled = new Map<string, readonly string[]>();
const inFlight = new Map<string, Promise<readonly string[]>>();

/**
 * Forget every token's agents read so far, so the next page asks the server again. The tests' setup
 * calls it after each test: test files share one module graph per worker (`vite.config.ts`), and an
 * agent list one file's server answered for a token must not stand in for another file's answer.
 */
export function forgetServedAgents(): void {
  settled.clear();
  inFlight.clear();
}

function loadServedAgents(key: string, token: string, base: string): Promise<readonly string[]> {
  let pending = inFlight.get(key);
  if (!pending) {
    pending = searchServedAgents(token, base)
      .then((agents) => {
        settled.set(key, agents);
        return agents;
      })
      .finally(() => inFlight.delete(key));
    inFlight.set(key, pending);
  }
  return pending;
}

export function useAgents(token: string): AgentsView {
  const base = apiUrl();
  const key = `${base}\n${token}`;
  const [attempt, setAttempt] = useState(0);
  const [failure, setFailure] = useState<{ key: string; attempt: number; error: string } | null>(null);
  const [, setLoaded] = useState(0);
  const retry = useCallback(() => setAttempt((n) => n + 1), []);

  useEffect(() => {
    if (settled.has(key)) return;
    let current = true;
    loadServedAgents(key, token, base).then(
      () => current && setLoaded((n) => n + 1),
      (error: unknown) => current && setFailure({ key, attempt, error: agentsProblem(error, base) }),
    );
    return () => {
      current = false;
    };
  }, [key, token, base, attempt]);

  const agents = settled.get(key);
  if (agents) return { status: "ready", agents, retry };
  if (failure?.key === key && failure.attempt === attempt) return { status: "failed", error: failure.error, retry };
  return { status: "loading", retry };
}
