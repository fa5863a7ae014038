/**
 * Quorums ("N distinct people must approve"): read from an interrupt's review config, a per-call
 * value, an inbox row or a receipt, and said in words: "1 of 2 approvals · approved by sam".
 * Every field is optional on the wire: a call that needs one approval carries none of them.
 */
import { isRecord } from "../interrupts/guards";

export interface Quorum {
  required: number;
  approvedBy: string[];
}

const names = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];

function quorum(required: unknown, approvedBy: unknown): Quorum | null {
  if (typeof required !== "number" || !Number.isInteger(required) || required < 2) return null;
  return { required, approvedBy: names(approvedBy) };
}

/** From a review config or per-call value: `approvals_required` (only when > 1) and `approved_by`. */
export function quorumOfRequest(value: unknown): Quorum | null {
  return isRecord(value) ? quorum(value.approvals_required, value.approved_by) : null;
}

/** From an inbox row or a receipt: `approvals: {required, approved_by}`. */
export function quorumOfRecord(value: unknown): Quorum | null {
  const approvals = isRecord(value) ? value.approvals : undefined;
  return isRecord(approvals) ? quorum(approvals.required, approvals.approved_by) : null;
}

export function isPartial(q: Quorum): boolean {
  return q.approvedBy.length < q.required;
}

export function describeQuorum(q: Quorum): string {
  const count = `${Math.min(q.approvedBy.length, q.required)} of ${q.required} approvals`;
  return q.approvedBy.length ? `${count} · approved by ${q.approvedBy.join(", ")}` : count;
}
