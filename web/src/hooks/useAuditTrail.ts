/** Audit trail of one thread (accepted decisions and refused attempts), from `GET /audit/{thread_id}`. */
import { useCallback, useEffect, useState } from "react";
import { getJson } from "../api/http";
import type { AuditRecord } from "../contracts/generated";
import { isAuditRecord, isRecord } from "../interrupts/guards";

/** Re-read this often while the thread is open: the server escalates and expires on its own. */
const AUDIT_POLL_MS = 10_000;

export function useAuditTrail(threadId: string | null, token: string, apiUrl: string) {
  const [records, setRecords] = useState<AuditRecord[]>([]);
  const [available, setAvailable] = useState(false);
  const [version, setVersion] = useState(0);
  const refresh = useCallback(() => setVersion((n) => n + 1), []);

  useEffect(() => {
    if (!threadId) {
      setRecords([]);
      setAvailable(false);
      return;
    }
    const abort = new AbortController();
    getJson(`/audit/${encodeURIComponent(threadId)}`, token, { signal: abort.signal, base: apiUrl })
      .then((body) => {
        const list = isRecord(body) && Array.isArray(body.records) ? body.records : [];
        setRecords(list.filter(isAuditRecord));
        setAvailable(true);
      })
      .catch(() => {
        if (!abort.signal.aborted) setAvailable(false);
        // no audit yet (new thread) or not allowed: thread state receipts still show
      });
    const timer = setTimeout(refresh, AUDIT_POLL_MS);
    return () => {
      abort.abort();
      clearTimeout(timer);
    };
  }, [threadId, token, apiUrl, version, refresh]);

  return { records, available, refresh };
}
