/**
 * Deadlines as a person reads them: "due in 3 h 12 min", "overdue by 5 min", and what happens
 * when one passes (rejected, or escalated to the group the approval names). Pure; the clock is
 * passed in, so the tests choose the time.
 */
import type { BatchedApprovalRequest } from "../contracts/generated";
import { inWords } from "./deciders";

/** What happens when a deadline passes (the contract's `on_expiry`). */
export type Expiry = NonNullable<BatchedApprovalRequest["on_expiry"]>;

export interface DeadlineView {
  /** "due in 3 h 12 min" or "overdue by 5 min". */
  text: string;
  overdue: boolean;
  /** Under an hour left (or overdue): the row or card is highlighted. */
  urgent: boolean;
}

/** A span of seconds in the two largest units that matter: "45 s", "12 min", "3 h 12 min", "2 d 4 h". */
export function formatSpan(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const minutes = Math.floor(s / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
  const days = Math.floor(hours / 24);
  return hours % 24 ? `${days} d ${hours % 24} h` : `${days} d`;
}

/** The countdown to `deadline` (ISO time) at `nowMs`; `null` when there is no readable deadline. */
export function countdown(deadline: string | null | undefined, nowMs: number): DeadlineView | null {
  if (!deadline) return null;
  const at = Date.parse(deadline);
  if (Number.isNaN(at)) return null;
  const left = (at - nowMs) / 1000;
  if (left <= 0) return { text: `overdue by ${formatSpan(-left)}`, overdue: true, urgent: true };
  return { text: `due in ${formatSpan(left)}`, overdue: false, urgent: left < 3600 };
}

/** What happens when the deadline passes, in words; `escalatesTo` is the group an escalation goes to. */
export function expiryText(
  onExpiry: Expiry | null | undefined,
  escalated: boolean,
  escalatesTo: string | null | undefined,
): string | null {
  const target = escalatesTo ? inWords(escalatesTo) : "the group it escalates to";
  if (escalated) return `escalated to ${target}; rejected if it waits past this`;
  switch (onExpiry) {
    case "escalate":
      return `then it goes to ${target}`;
    case "reject":
      return "then it is rejected";
    case null:
    case undefined:
      return null;
    default:
      return unknownExpiry(onExpiry);
  }
}

/** An `on_expiry` the contract added and this text does not say: `tsc` fails on the call. */
function unknownExpiry(onExpiry: never): never {
  throw new Error(`no words for on_expiry ${String(onExpiry)}`);
}

/** The deadline of an escalated approval: escalation time plus the escalation's own wait. */
export function escalatedDeadline(escalatedAt: string, escalatedSeconds: number | null | undefined): string | null {
  const at = Date.parse(escalatedAt);
  if (Number.isNaN(at) || typeof escalatedSeconds !== "number") return null;
  return new Date(at + escalatedSeconds * 1000).toISOString();
}
