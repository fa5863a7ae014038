/**
 * Which of a thread's receipts verify (signature, bound fields, audit chain), from
 * `GET /audit/{thread_id}/verification`. Read again whenever the number of receipts changes.
 */
import { useEffect, useState } from "react";
import { getJson } from "../api/http";
import type { ReceiptVerdict } from "../contracts/generated";
import { isRecord } from "../interrupts/guards";

export const verdictKey = (r: { interrupt_id: string; tool_call_id: string }) => `${r.interrupt_id}|${r.tool_call_id}`;

function isVerdict(value: unknown): value is ReceiptVerdict {
  return (
    isRecord(value) &&
    typeof value.interrupt_id === "string" &&
    typeof value.tool_call_id === "string" &&
    typeof value.verified === "boolean" &&
    Array.isArray(value.problems)
  );
}

/** Verdicts by `verdictKey`; empty while unknown (not signed yet, not allowed, or no server). */
export function verdictsOf(body: unknown): Map<string, ReceiptVerdict> {
  const list = isRecord(body) && Array.isArray(body.receipts) ? body.receipts.filter(isVerdict) : [];
  return new Map(list.map((verdict) => [verdictKey(verdict), verdict]));
}

export function useReceiptVerification(threadId: string | null, token: string, apiUrl: string, receipts: number) {
  const [verdicts, setVerdicts] = useState<Map<string, ReceiptVerdict>>(new Map());
  useEffect(() => {
    if (!threadId || receipts === 0) {
      setVerdicts(new Map());
      return;
    }
    const abort = new AbortController();
    getJson(`/audit/${encodeURIComponent(threadId)}/verification`, token, { signal: abort.signal, base: apiUrl })
      .then((body) => setVerdicts(verdictsOf(body)))
      .catch(() => {
        if (!abort.signal.aborted) setVerdicts(new Map());
      });
    return () => abort.abort();
  }, [threadId, token, apiUrl, receipts]);
  return verdicts;
}
