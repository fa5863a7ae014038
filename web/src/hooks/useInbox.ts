/** Pending approvals across threads, from `GET /inbox`, re-read every few seconds. */
import { useCallback, useEffect, useState } from "react";
import { describeError, getJson } from "../api/http";
import { INBOX_POLL_MS } from "../config";
import type { InboxPage } from "../contracts/generated";
import { isInboxItem, isRecord } from "../interrupts/guards";

export interface InboxFilters {
  agent: string;
  tool: string;
  /** A group the caller decides as (`owner`: the caller's own questions); "" for all. */
  group: string;
  /** "Waiting for me": only rows the caller may decide and has not approved yet. */
  mine: boolean;
}

/** `counts` of an `/inbox` answer: a whole number per group; anything else is left out. */
export function countsOf(value: unknown): Record<string, number> {
  if (!isRecord(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter((entry): entry is [string, number] => Number.isInteger(entry[1]) && (entry[1] as number) >= 0),
  );
}

function toPage(body: unknown): InboxPage {
  if (!isRecord(body) || !Array.isArray(body.items)) throw new Error("unexpected /inbox answer");
  return {
    items: body.items.filter(isInboxItem),
    next_cursor: typeof body.next_cursor === "string" && body.next_cursor ? body.next_cursor : null,
    total: typeof body.total === "number" ? body.total : body.items.length,
    counts: countsOf(body.counts),
  };
}

const NO_COUNTS: Record<string, number> = {};

export function useInbox(token: string, filters: InboxFilters, pollMs = INBOX_POLL_MS) {
  // cursors[i] is the cursor that fetches page i; page 0 has none.
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  const [page, setPage] = useState<InboxPage | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  const cursor = cursors[cursors.length - 1] ?? null;

  useEffect(() => setCursors([null]), [filters.agent, filters.tool, filters.group, filters.mine, token]);

  useEffect(() => {
    const abort = new AbortController();
    const query = new URLSearchParams({ limit: "50" });
    if (cursor) query.set("cursor", cursor);
    if (filters.agent) query.set("agent", filters.agent);
    if (filters.tool) query.set("tool", filters.tool);
    if (filters.group) query.set("group", filters.group);
    if (filters.mine) query.set("mine", "true");
    getJson(`/inbox?${query}`, token, { signal: abort.signal })
      .then((body) => {
        setPage(toPage(body));
        setError(null);
      })
      .catch((err: unknown) => {
        if (!abort.signal.aborted) setError(describeError(err));
      });
    const timer = setTimeout(() => setTick((n) => n + 1), pollMs);
    return () => {
      abort.abort();
      clearTimeout(timer);
    };
  }, [token, cursor, filters.agent, filters.tool, filters.group, filters.mine, tick, pollMs]);

  const next = useCallback(() => {
    const nextCursor = page?.next_cursor;
    if (nextCursor) setCursors((prev) => [...prev, nextCursor]);
  }, [page]);
  const previous = useCallback(() => setCursors((prev) => (prev.length > 1 ? prev.slice(0, -1) : prev)), []);
  const refresh = useCallback(() => setTick((n) => n + 1), []);

  return {
    items: page?.items ?? [],
    /** The rows matching the filters, on every page. */
    total: page?.total ?? 0,
    /** The caller's whole inbox per group (not filtered). */
    counts: page?.counts ?? NO_COUNTS,
    loaded: page !== null,
    error,
    pageNumber: cursors.length,
    hasNext: Boolean(page?.next_cursor),
    next,
    previous,
    refresh,
  };
}
