/**
 * What an inbox row says beyond its contract type: its deadline, whether it was escalated and
 * its quorum progress, read defensively (older servers send none of them).
 */
import type { InboxItem } from "../contracts/generated";
import { isRecord } from "../interrupts/guards";
import { inWords } from "./deciders";
import { quorumOfRecord, quorumOfRequest, type Quorum } from "./quorum";

export interface InboxRowStatus {
  deadline: string | null;
  escalated: boolean;
  quorum: Quorum | null;
}

export function inboxRowStatus(item: InboxItem): InboxRowStatus {
  const row: Record<string, unknown> = { ...item };
  return {
    deadline: typeof row.deadline === "string" ? row.deadline : null,
    escalated: row.escalated === true,
    quorum: quorumOfRecord(row) ?? (isRecord(row.value) ? quorumOfRequest(row.value) : null),
  };
}

/**
 * What else waits on the row's thread, for whom (the rest of a turn of several deciders):
 * "confirm_address (the thread's owner)", or null when nothing else does. The thread goes on once all are answered.
 */
export function alsoWaiting(item: InboxItem): string | null {
  const others = item.also_waiting ?? [];
  if (!others.length) return null;
  return others.map((w) => `${w.tool ?? "an answer"} (${inWords(w.required_role)})`).join(", ");
}

/** `47` → "47 s", `600` → "10 min": how long a row has waited. */
export function age(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  if (seconds < 129600) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86400)} d`;
}
