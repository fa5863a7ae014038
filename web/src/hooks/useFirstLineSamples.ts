/**
 * The first-line reviewer's sampled approvals a person should check afterwards (`GET /first-line/samples`),
 * and the verb to give one's word on one (`POST /first-line/samples/{thread}/{call}`): fine, or should not have.
 */
import { useCallback, useEffect, useState } from "react";
import { ApiError, describeError, getJson, postJson } from "../api/http";
import { INBOX_POLL_MS } from "../config";
import type { FirstLineReview } from "../contracts/generated";
import { conforms } from "../contracts/schema";
import { isRecord } from "../interrupts/guards";

export type SampleWord = "fine" | "should_not_have";

const isSample = conforms<FirstLineReview>("FirstLineReview");

/** The samples for `token`'s holder; `enabled` false (someone who decides for no group) asks the server nothing. */
export function useFirstLineSamples(token: string, enabled: boolean, pollMs = INBOX_POLL_MS) {
  const [items, setItems] = useState<FirstLineReview[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [allowed, setAllowed] = useState(true);
  const [tick, setTick] = useState(0);

  useEffect(() => {
    if (!enabled) return;
    const abort = new AbortController();
    getJson("/first-line/samples?limit=50", token, { signal: abort.signal })
      .then((body) => {
        setItems(isRecord(body) && Array.isArray(body.items) ? body.items.filter(isSample) : []);
        setError(null);
      })
      .catch((err: unknown) => {
        if (abort.signal.aborted) return;
        if (err instanceof ApiError && err.status === 403) setAllowed(false);
        else setError(describeError(err));
      });
    const timer = setTimeout(() => setTick((n) => n + 1), pollMs);
    return () => {
      abort.abort();
      clearTimeout(timer);
    };
  }, [token, tick, pollMs, enabled]);

  const check = useCallback(
    async (sample: FirstLineReview, review: SampleWord, note: string) => {
      try {
        await postJson(`/first-line/samples/${sample.thread_id}/${sample.tool_call_id}`, token, { review, note });
        setItems((now) => now.filter((s) => s.tool_call_id !== sample.tool_call_id || s.thread_id !== sample.thread_id));
        setError(null);
      } catch (err: unknown) {
        setError(describeError(err));
      }
    },
    [token],
  );

  return { items, error, allowed: allowed && enabled, check };
}
