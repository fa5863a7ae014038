/**
 * The full answer schema of each pending interrupt. The streaming protocol carries only
 * `{id, value}`, and the graph publishes an approval's `response_schema` by reference
 * (`{"x-hitl-answer-schema": "/threads/{thread_id}/answer-schemas"}`), so the schemas are read
 * from `GET /threads/{id}/answer-schemas`: `{"schemas": {interrupt_id: schema | null}}`, every
 * interrupt waiting on the thread (nested ones included), derived by the server from its value.
 */
import { useEffect, useRef, useState } from "react";
import { getJson } from "../api/http";
import { isRecord } from "../interrupts/guards";
import type { JsonSchema } from "../interrupts/responseSchema";

const RETRY_MS = 1500;
const MAX_ATTEMPTS = 3;

/** The schemas of an answer-schemas page, by interrupt id (`null`: the server knows none). */
export function answerSchemas(page: unknown): Map<string, JsonSchema | null> {
  const found = new Map<string, JsonSchema | null>();
  const schemas = isRecord(page) && isRecord(page.schemas) ? page.schemas : {};
  for (const [id, schema] of Object.entries(schemas)) found.set(id, isRecord(schema) ? schema : null);
  return found;
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
    getJson(`/threads/${encodeURIComponent(threadId)}/answer-schemas`, token, { signal: abort.signal, base: apiUrl })
      .then((page) => {
        const found = answerSchemas(page);
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
