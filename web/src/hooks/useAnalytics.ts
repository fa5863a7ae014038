/** Approval analytics for a period, from `GET /analytics?since=&agent=&tool=`; re-read when they change. */
import { useCallback, useEffect, useState } from "react";
import { describeError, getJson } from "../api/http";
import { type AnalyticsSummary, isAnalyticsSummary } from "../analytics/summary";

export const PERIODS = ["24h", "7d", "30d", "90d"] as const;
export type Period = (typeof PERIODS)[number];

export interface AnalyticsFilters {
  period: Period;
  agent: string;
  tool: string;
}

export function useAnalytics(token: string, filters: AnalyticsFilters) {
  const [summary, setSummary] = useState<AnalyticsSummary | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  const refresh = useCallback(() => setVersion((n) => n + 1), []);

  useEffect(() => {
    const abort = new AbortController();
    const query = new URLSearchParams({ since: filters.period });
    if (filters.agent) query.set("agent", filters.agent);
    if (filters.tool) query.set("tool", filters.tool);
    getJson(`/analytics?${query}`, token, { signal: abort.signal })
      .then((body) => {
        if (!isAnalyticsSummary(body)) throw new Error("unexpected /analytics answer");
        setSummary(body);
        setError(null);
      })
      .catch((err: unknown) => {
        if (!abort.signal.aborted) setError(describeError(err));
      });
    return () => abort.abort();
  }, [token, filters.period, filters.agent, filters.tool, version]);

  return { summary, error, refresh };
}
