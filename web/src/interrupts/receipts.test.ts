import { describe, expect, it } from "vitest";
import { receipt, toolApproval } from "../test/fixtures";
import { isAnswered, isPartialReceipt } from "./receipts";

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
