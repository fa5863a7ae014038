// @vitest-environment node
// Pure functions, no DOM: no jsdom to set up (the DOM tests are the .tsx files and useLasting).
import { describe, expect, it } from "vitest";
import { receipt, toolApproval } from "../test/fixtures";
import { auditRecord } from "../test/fixtures";
import { acceptedRecords, isAnswered, isPartialReceipt } from "./receipts";

const pending = { kind: "tool_approval" as const, id: "int-2", value: toolApproval };

describe("answered interrupts under a quorum", () => {
  it("a receipt of 1 of 2 approvals is partial and answers nothing: the call stays pending", () => {
    const partial = receipt({ interrupt_id: "int-2", tool_call_id: toolApproval.tool_call_id });
    const withQuorum = { ...partial, approvals: { required: 2, approved_by: ["sam"] } };
    expect(isPartialReceipt(withQuorum)).toBe(true);
    expect(isAnswered(pending, [withQuorum], new Set())).toBe(false);
  });

  it("the last approval of a quorum, a reject, or a call without a quorum answers it", () => {
    const base = receipt({ interrupt_id: "int-2", tool_call_id: toolApproval.tool_call_id });
    const full = { ...base, approvals: { required: 2, approved_by: ["sam", "kim"] } };
    const rejected = { ...base, decision: "reject", approvals: { required: 2, approved_by: [] } };
    for (const r of [full, rejected, base]) {
      expect(isPartialReceipt(r)).toBe(false);
      expect(isAnswered(pending, [r], new Set())).toBe(true);
    }
  });
});

describe("receipts from the audit trail", () => {
  it("only accepted answers are receipts: an escalation, a policy change or a refusal answers nothing", () => {
    const records = [
      auditRecord({ interrupt_id: "a", decision: "escalated", reviewer: "system" }),
      auditRecord({ interrupt_id: "b", decision: "tighten_policy" }),
      auditRecord({ interrupt_id: "c", decision: "refused", outcome: "refused" }),
      auditRecord({ interrupt_id: "d", decision: "reject", reviewer: "system" }),
      auditRecord({ interrupt_id: "e", decision: "edit" }),
    ];
    expect(acceptedRecords(records).map((r) => r.interrupt_id)).toEqual(["d", "e"]);
  });

  it("an answer the server gave up later (not_applied naming its interrupt) answers nothing: it waits again", () => {
    const approved = auditRecord({ interrupt_id: "int-2", decision: "approve", decided_at: "2026-12-07T10:00:00+00:00" });
    const other = auditRecord({ interrupt_id: "int-3", decision: "approve", decided_at: "2026-12-07T10:00:00+00:00" });
    const givenUp = auditRecord({
      interrupt_id: "int-1,int-2",
      decision: "not_applied",
      outcome: "failed",
      reviewer: "system",
      decided_at: "2026-12-07T10:05:00+00:00",
    });
    const answeredAgain = { ...approved, reviewer: "reviewer1", decided_at: "2026-12-07T10:09:00+00:00" };
    expect(acceptedRecords([approved, other, givenUp]).map((r) => r.interrupt_id)).toEqual(["int-3"]);
    expect(isAnswered(pending, acceptedRecords([approved, givenUp]), new Set())).toBe(false);
    expect(acceptedRecords([approved, givenUp, answeredAgain]).map((r) => r.reviewer)).toEqual(["reviewer1"]);
  });
});
