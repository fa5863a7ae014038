/** Audit trail of one thread (accepted decisions and refused attempts), from `GET /audit/{thread_id}`. */
import { useCallback, useEffect, useState } from "react";
import { getJson } from "../api/http";
import type { AuditRecord } from "../contracts/generated";
import { isAuditRecord, isRecord } from "../interrupts/guards";

export function useAuditTrail(threadId: string | null, token: string, apiUrl: string) {
  const [records, setRecords] = useState<AuditRecord[]>([]);
  const [version, setVersion] = useState(0);
  const refresh = useCallback(() => setVersion((n) => n + 1), []);

  useEffect(() => {
    if (!threadId) {
      setRecords([]);
      return;
    }
    const abort = new AbortController();
    getJson(`/audit/${encodeURIComponent(threadId)}`, token, { signal: abort.signal, base: apiUrl })
      .then((body) => {
        const list = isRecord(body) && Array.isArray(body.records) ? body.records : [];
        setRecords(list.filter(isAuditRecord));
      })
      .catch(() => {
        // no audit yet (new thread) or not allowed: thread state receipts still show
      });
    return () => abort.abort();
  }, [threadId, token, apiUrl, version]);

  return { records, refresh };
}
