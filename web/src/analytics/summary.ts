/**
 * The shape of `GET /analytics` (server/insight/analytics.py `summarise`) and its one guard.
 * Written by hand: the summary is a server view, not a contract of hitl/contracts/.
 */
import type { RecordedDecision } from "../contracts/generated";
import { RECORDED_DECISIONS } from "../contracts/schema";
import { isRecord } from "../interrupts/guards";

/** What a pending approval ended as: a person's recorded decision (the contract's `RecordedDecision`), or the watcher's expiry. */
export type Kind = RecordedDecision | "expire";
export const KINDS: readonly Kind[] = [...RECORDED_DECISIONS, "expire"];

export interface GroupStats {
  decisions: number;
  timed: number;
  median_seconds: number | null;
  p90_seconds: number | null;
  counts: Record<Kind, number>;
  rates: Record<Kind, number>;
}

export interface ArgEdits {
  changed: number;
  mean_change: number | null;
  mean_relative_change: number | null;
}

export interface ToolStats extends GroupStats {
  tool: string;
  edits: Record<string, ArgEdits>;
}

export interface AgentStats extends GroupStats {
  agent: string;
}

export interface ReviewerStats extends GroupStats {
  reviewer: string;
  quick_approvals: number;
}

export type DayCounts = { day: string } & Record<Kind, number>;

/** A first-line reviewer's numbers for one tool (server/insight/first_line_stats.py), apart from people's. */
export interface FirstLineRow {
  tool: string;
  asked: number;
  decided: number;
  approved: number;
  rejected: number;
  sent_to_people: number;
  share_decided: number;
  sent_because: Record<string, number>;
  confirmed: number;
  overturned: number;
  overturned_rate: number;
  median_ms: number | null;
  p90_ms: number | null;
}

/** A decision the server accepted and could not apply (server/insight/unapplied.py), for a supervisor to look at. */
export interface NotApplied {
  thread_id: string;
  interrupt_id: string;
  agent: string;
  tool: string;
  outcome: string;
  at: string;
  why: string;
}

export interface AnalyticsSummary {
  since: string;
  until: string;
  agent: string | null;
  tool: string | null;
  thresholds: {
    quick_seconds: number;
    stamp_rate: number;
    stamp_min_decisions: number;
    rejected_rate: number;
    rejected_min_decisions: number;
  };
  /** `not_applied` absent from servers before withdrawals' runs were recorded when they could not start. */
  totals: GroupStats & { refused: number; escalated: number; not_applied?: number };
  by_tool: ToolStats[];
  by_agent: AgentStats[];
  by_reviewer: ReviewerStats[];
  by_day: DayCounts[];
  rubber_stamp: { quick_approvals: number; quick_approval_rate: number; reviewers_approving_nearly_all: string[] };
  often_rejected: { tool: string; decisions: number; reject_rate: number }[];
  /** Newest first; absent from servers before it was recorded (as `totals.not_applied`). */
  not_applied?: NotApplied[];
  /** Absent from servers before the first-line reviewer. */
  first_line?: { totals: FirstLineRow; by_tool: FirstLineRow[] };
}

export function isAnalyticsSummary(value: unknown): value is AnalyticsSummary {
  return (
    isRecord(value) &&
    isRecord(value.totals) &&
    typeof value.totals.decisions === "number" &&
    Array.isArray(value.by_tool) &&
    Array.isArray(value.by_agent) &&
    Array.isArray(value.by_reviewer) &&
    Array.isArray(value.by_day) &&
    isRecord(value.rubber_stamp) &&
    Array.isArray(value.often_rejected)
  );
}

/** A duration for people: 42 s, 3.5 min, 2.0 h; "–" when nothing was timed (as `hitl stats`). */
export function duration(seconds: number | null): string {
  if (seconds === null) return "–";
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${(seconds / 60).toFixed(1)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

export function percent(rate: number): string {
  return `${Math.round(rate * 100)}%`;
}
