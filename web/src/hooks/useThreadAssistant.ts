/**
 * Which agent (graph) a thread runs. A new conversation: the URL's `agent` when the server serves
 * it, else the first agent it serves. A thread: the URL's `agent` when served, else the thread's
 * own metadata (`graph_id`); a thread that names none is said so, never given a default.
 */
import { useEffect, useState } from "react";
import { describeError, getJson } from "../api/http";
import { isRecord } from "../interrupts/guards";
import type { ServedAgents } from "./useAgents";

export interface ThreadAssistant {
  assistantId: string | null;
  error: string | null;
}

const OPENING: ThreadAssistant = { assistantId: null, error: null };

function servedList(agents: readonly string[]): string {
  return agents.length ? agents.join(", ") : "none";
}

/** The agent a new conversation starts with, or why it cannot start. */
export function newConversationAgent(fromUrl: string | null, served: ServedAgents): ThreadAssistant {
  if (served.status === "loading") return OPENING;
  if (served.status === "failed") return { assistantId: null, error: served.error };
  if (fromUrl) {
    return served.agents.includes(fromUrl)
      ? { assistantId: fromUrl, error: null }
      : { assistantId: null, error: `The server serves no agent "${fromUrl}" (it serves: ${servedList(served.agents)}).` };
  }
  const first = served.agents[0];
  return first
    ? { assistantId: first, error: null }
    : { assistantId: null, error: "The server serves no agent yet: add a graph to langgraph.json and restart it." };
}

/** The agent a thread's metadata names (`graph_id`, else `assistant_id`), or `null`. */
export function agentOfThread(thread: unknown): string | null {
  const metadata = isRecord(thread) && isRecord(thread.metadata) ? thread.metadata : {};
  const graph = metadata.graph_id ?? metadata.assistant_id;
  return typeof graph === "string" && graph ? graph : null;
}

export function useThreadAssistant(
  threadId: string | null,
  fromUrl: string | null,
  served: ServedAgents,
  token: string,
  apiUrl: string,
): ThreadAssistant {
  // A thread opened with a served agent in its URL needs no read; until the list is known, wait.
  const urlPending = Boolean(threadId && fromUrl && served.status === "loading");
  const fromServedUrl = served.status === "ready" && fromUrl && served.agents.includes(fromUrl) ? fromUrl : null;
  const readMetadata = Boolean(threadId) && !urlPending && !fromServedUrl;
  const [resolved, setResolved] = useState<{ threadId: string; result: ThreadAssistant } | null>(null);

  useEffect(() => {
    if (!readMetadata || !threadId) return;
    const abort = new AbortController();
    getJson(`/threads/${encodeURIComponent(threadId)}`, token, { signal: abort.signal, base: apiUrl })
      .then((thread) => {
        const agent = agentOfThread(thread);
        setResolved({
          threadId,
          result: agent
            ? { assistantId: agent, error: null }
            : { assistantId: null, error: `Thread ${threadId} names no agent in its metadata (graph_id), so it cannot be opened here.` },
        });
      })
      .catch((error: unknown) => {
        if (abort.signal.aborted) return;
        setResolved({ threadId, result: { assistantId: null, error: `Cannot open thread ${threadId}: ${describeError(error)}` } });
      });
    return () => abort.abort();
  }, [readMetadata, threadId, token, apiUrl]);

  if (!threadId) return newConversationAgent(fromUrl, served);
  if (fromServedUrl) return { assistantId: fromServedUrl, error: null };
  if (readMetadata && resolved?.threadId === threadId) return resolved.result;
  return OPENING;
}
