/**
 * Approval receipts: who decided what, read from thread state (`approval_receipts`) and
 * from `GET /audit/{thread_id}`. Decides which interrupts are already answered, so a
 * reload never shows an answered approval as pending.
 */
import type { ApprovalReceipt, AuditRecord } from "../contracts/generated";
import { isPartial, quorumOfRecord } from "../present/quorum";
import { isApprovalReceipt, isRecord, isRecordedDecision, type ClassifiedInterrupt } from "./guards";

export function receiptsFromValues(values: unknown): ApprovalReceipt[] {
  const list = isRecord(values) ? values.approval_receipts : undefined;
  return Array.isArray(list) ? list.filter(isApprovalReceipt) : [];
}

/**
 * Audit records that are receipts: accepted answers only. Refused attempts answer nothing, and
 * neither do the trail's other events (an escalation, a policy change, a state write, an allowance).
 * An answer the server gave up later (a `not_applied` record naming its interrupt, e.g. its
 * assistant was deleted before its run came) answers nothing either: the approval waits again.
 */
export function acceptedRecords(records: AuditRecord[]): ApprovalReceipt[] {
  return records
    .filter((record) => record.outcome === "accepted" && isRecordedDecision(record.decision))
    .filter((record) => !givenUpLater(record, records))
    .map(({ thread_id: _thread, outcome: _outcome, refusal: _refusal, ...receipt }) => receipt);
}

/** Whether a `not_applied` record after `record` names its interrupt (the server's is comma-joined). */
function givenUpLater(record: AuditRecord, records: AuditRecord[]): boolean {
  return records.some(
    (later) =>
      later.decision === "not_applied" &&
      later.decided_at >= record.decided_at &&
      later.interrupt_id.split(",").includes(record.interrupt_id),
  );
}

export const receiptKey = (r: ApprovalReceipt) => `${r.interrupt_id}|${r.tool_call_id}|${r.tool}`;

/** Union of every source, one receipt per (interrupt, tool call), oldest first. */
export function mergeReceipts(...sources: ApprovalReceipt[][]): ApprovalReceipt[] {
  const byKey = new Map<string, ApprovalReceipt>();
  for (const source of sources) {
    for (const receipt of source) {
      if (!byKey.has(receiptKey(receipt))) byKey.set(receiptKey(receipt), receipt);
    }
  }
  return [...byKey.values()].sort((a, b) => a.decided_at.localeCompare(b.decided_at));
}

/** A receipt of one approval of several a quorum needs: the call waits for the others. */
export function isPartialReceipt(receipt: ApprovalReceipt): boolean {
  const quorum = quorumOfRecord(receipt);
  return quorum !== null && receipt.decision === "approve" && isPartial(quorum);
}

/**
 * True when a receipt (or a decision this tab sent) already answers the interrupt. A partial
 * quorum receipt answers nothing: the call is asked again until enough people approved it.
 */
export function isAnswered(
  item: ClassifiedInterrupt,
  receipts: ApprovalReceipt[],
  sentIds: ReadonlySet<string>,
): boolean {
  if (sentIds.has(item.id)) return true;
  return receipts.some(
    (r) =>
      !isPartialReceipt(r) &&
      (r.interrupt_id === item.id || (item.kind === "tool_approval" && r.tool_call_id === item.value.tool_call_id)),
  );
}
