/** Which assistant (graph) a thread runs: the URL's `agent` when it names one, else the thread's metadata. */
import { useEffect, useState } from "react";
import { describeError, getJson } from "../api/http";
import { isAssistantId } from "../config";
import { isRecord } from "../interrupts/guards";

export function useThreadAssistant(
  threadId: string | null,
  fromUrl: string | null,
  token: string,
  apiUrl: string,
): { assistantId: string | null; error: string | null } {
  const known = isAssistantId(fromUrl) || (!threadId && fromUrl) ? fromUrl : null;
  const [resolved, setResolved] = useState<{ threadId: string; assistantId: string | null; error: string | null } | null>(null);

  useEffect(() => {
    if (known || !threadId) return;
    const abort = new AbortController();
    getJson(`/threads/${encodeURIComponent(threadId)}`, token, { signal: abort.signal, base: apiUrl })
      .then((thread) => {
        const metadata = isRecord(thread) && isRecord(thread.metadata) ? thread.metadata : {};
        const graph = metadata.graph_id ?? metadata.assistant_id;
        setResolved({ threadId, assistantId: typeof graph === "string" ? graph : fromUrl ?? "support", error: null });
      })
      .catch((error: unknown) => {
        if (abort.signal.aborted) return;
        setResolved({ threadId, assistantId: null, error: `Cannot open thread ${threadId}: ${describeError(error)}` });
      });
    return () => abort.abort();
  }, [known, threadId, token, apiUrl, fromUrl]);

  if (known) return { assistantId: known, error: null };
  if (!threadId) return { assistantId: "support", error: null };
  if (resolved?.threadId === threadId) return { assistantId: resolved.assistantId, error: resolved.error };
  return { assistantId: null, error: null };
}
