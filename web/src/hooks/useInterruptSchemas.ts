/**
 * The `response_schema` of each pending interrupt. The streaming protocol carries only
 * `{id, value}`, so the schemas are read from `GET /threads/{id}/state`, where every
 * interrupt (in `interrupts` and in each task, nested ones included) keeps its own.
 */
import { useEffect, useRef, useState } from "react";
import { getJson } from "../api/http";
import { isRecord } from "../interrupts/guards";
import type { JsonSchema } from "../interrupts/responseSchema";

const RETRY_MS = 1500;
const MAX_ATTEMPTS = 3;

export function collectResponseSchemas(state: unknown, into = new Map<string, JsonSchema | null>()) {
  if (!isRecord(state)) return into;
  const visit = (interrupts: unknown) => {
    if (!Array.isArray(interrupts)) return;
    for (const entry of interrupts) {
      if (!isRecord(entry) || typeof entry.id !== "string") continue;
      const schema = isRecord(entry.response_schema) ? entry.response_schema : null;
      if (schema || !into.has(entry.id)) into.set(entry.id, schema);
    }
  };
  visit(state.interrupts);
  if (Array.isArray(state.tasks)) {
    for (const task of state.tasks) {
      if (!isRecord(task)) continue;
      visit(task.interrupts);
      collectResponseSchemas(task.state, into);
    }
  }
  return into;
}

/** Map from interrupt id to its schema: absent while unknown, `null` when it has none. */
export function useInterruptSchemas(
  threadId: string | null,
  token: string,
  apiUrl: string,
  interruptIds: readonly string[],
): ReadonlyMap<string, JsonSchema | null> {
  const [schemas, setSchemas] = useState<ReadonlyMap<string, JsonSchema | null>>(new Map());
  const attempts = useRef(0);
  const [retry, setRetry] = useState(0);
  const missing = interruptIds.filter((id) => !schemas.has(id)).sort().join(",");

  useEffect(() => {
    setSchemas(new Map());
    attempts.current = 0;
  }, [threadId]);

  useEffect(() => {
    if (!threadId || !missing) return;
    const abort = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    getJson(`/threads/${encodeURIComponent(threadId)}/state`, token, { signal: abort.signal, base: apiUrl })
      .then((state) => {
        const found = collectResponseSchemas(state);
        const wanted = missing.split(",");
        attempts.current += 1;
        const settle = wanted.every((id) => found.has(id)) || attempts.current >= MAX_ATTEMPTS;
        setSchemas((prev) => {
          const next = new Map(prev);
          for (const id of wanted) {
            if (found.has(id)) next.set(id, found.get(id) ?? null);
            else if (settle) next.set(id, null);
          }
          return next;
        });
        if (settle) attempts.current = 0;
        else timer = setTimeout(() => setRetry((n) => n + 1), RETRY_MS);
      })
      .catch(() => {
        if (abort.signal.aborted) return;
        attempts.current += 1;
        if (attempts.current < MAX_ATTEMPTS) timer = setTimeout(() => setRetry((n) => n + 1), RETRY_MS);
        else attempts.current = 0;
      });
    return () => {
      abort.abort();
      if (timer) clearTimeout(timer);
    };
  }, [threadId, token, apiUrl, missing, retry]);

  return schemas;
}
