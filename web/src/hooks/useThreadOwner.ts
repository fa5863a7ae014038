/**
 * Whose thread this is: they answer its forms and owner's questions. A requester sees only their own
 * threads, and whoever started a conversation on this page owns it, so the thread is read
 * (`GET /threads/{id}`, its `owner` metadata) only for staff opening a thread they did not start here.
 */
import { useEffect, useState } from "react";
import { getJson } from "../api/http";
import { isRecord } from "../interrupts/guards";
import type { Me } from "./useMe";

/** The `owner` a thread's metadata names, or null. */
export function ownerOfThread(thread: unknown): string | null {
  const metadata = isRecord(thread) && isRecord(thread.metadata) ? thread.metadata : {};
  return typeof metadata.owner === "string" && metadata.owner ? metadata.owner : null;
}

export function useThreadOwner(
  threadId: string | null,
  startedHere: boolean,
  me: Me | null,
  token: string,
  apiUrl: string,
): string | null {
  // Someone who is not staff reads only their own threads: any thread they see is theirs.
  const known = me && (startedHere || !me.staff) ? me.identity : null;
  const [read, setRead] = useState<{ threadId: string; owner: string | null } | null>(null);
  useEffect(() => {
    if (known || !me || !threadId) return;
    const abort = new AbortController();
    getJson(`/threads/${encodeURIComponent(threadId)}`, token, { signal: abort.signal, base: apiUrl })
      .then((thread) => setRead({ threadId, owner: ownerOfThread(thread) }))
      .catch(() => {
        // unreadable: no owner known, so no one is offered the owner's buttons; the server decides anyway
      });
    return () => abort.abort();
  }, [known, me, threadId, token, apiUrl]);
  if (known) return known;
  return read && read.threadId === threadId ? read.owner : null;
}
