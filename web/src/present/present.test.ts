// @vitest-environment node
// Pure functions, no DOM: no jsdom to set up (the DOM tests are the .tsx files and useLasting).
import { describe, expect, it } from "vitest";
import { countdown, escalatedDeadline, expiryText, formatSpan } from "./deadline";
import { age, alsoWaiting, inboxRowStatus } from "./inboxRow";
import { describeQuorum, isPartial, quorumOfRecord, quorumOfRequest } from "./quorum";
import { formatValue, humanizeKey, summarizeArgs, summarizeResult, summarizeToolCall } from "./summaries";
import type { InboxItem } from "../contracts/generated";

const NOW = Date.parse("2026-12-01T12:00:00Z");

describe("countdown", () => {
  it("says how long is left in the two largest units", () => {
    expect(formatSpan(45)).toBe("45 s");
    expect(formatSpan(60 * 12 + 30)).toBe("12 min");
    expect(formatSpan(3600 * 3 + 60 * 12)).toBe("3 h 12 min");
    expect(formatSpan(3600 * 5)).toBe("5 h");
    expect(formatSpan(86400 * 2 + 3600 * 4 + 59)).toBe("2 d 4 h");
  });

  it("due, urgent under an hour, overdue after", () => {
    expect(countdown("2026-12-02T12:00:00Z", NOW)).toEqual({ text: "due in 1 d", overdue: false, urgent: false });
    expect(countdown("2026-12-01T12:30:00Z", NOW)).toEqual({ text: "due in 30 min", overdue: false, urgent: true });
    expect(countdown("2026-12-01T11:55:00Z", NOW)).toEqual({ text: "overdue by 5 min", overdue: true, urgent: true });
    expect(countdown("2026-12-01T13:00:00+01:00", NOW)?.text).toBe("overdue by 0 s");
  });

  it("no deadline, or one that is not a time: nothing", () => {
    expect(countdown(undefined, NOW)).toBeNull();
    expect(countdown("tomorrow", NOW)).toBeNull();
  });

  it("what happens then, in words; an escalation moves the deadline", () => {
    expect(expiryText("escalate", false, "supervisor")).toBe("then it goes to a supervisor");
    expect(expiryText("escalate", false, "finance-leads")).toBe("then it goes to someone in finance-leads");
    expect(expiryText("reject", false, "supervisor")).toBe("then it is rejected");
    expect(expiryText(null, true, "supervisor")).toContain("escalated to a supervisor");
    expect(expiryText(null, true, "finance-leads")).toContain("escalated to someone in finance-leads");
    expect(expiryText(undefined, false, null)).toBeNull();
    expect(escalatedDeadline("2026-12-01T12:00:00Z", 3600)).toBe("2026-12-01T13:00:00.000Z");
    expect(escalatedDeadline("2026-12-01T12:00:00Z", null)).toBeNull();
  });
});

describe("quorum", () => {
  it("read from a review config or per-call value, only when more than one approval is needed", () => {
    expect(quorumOfRequest({ approvals_required: 2, approved_by: ["sam"] })).toEqual({ required: 2, approvedBy: ["sam"] });
    expect(quorumOfRequest({ approvals_required: 2 })).toEqual({ required: 2, approvedBy: [] });
    expect(quorumOfRequest({ approvals_required: 1, approved_by: [] })).toBeNull();
    expect(quorumOfRequest({ action_name: "pay_invoice" })).toBeNull();
    expect(quorumOfRequest({ approvals_required: "2" })).toBeNull();
  });

  it("read from a receipt or inbox row's approvals; fewer approvers than required is partial", () => {
    const q = quorumOfRecord({ approvals: { required: 2, approved_by: ["sam", 3] } });
    expect(q).toEqual({ required: 2, approvedBy: ["sam"] });
    expect(isPartial(q!)).toBe(true);
    expect(isPartial({ required: 2, approvedBy: ["sam", "kim"] })).toBe(false);
    expect(quorumOfRecord({})).toBeNull();
  });

  it("said as 'N of M approvals · approved by ...'", () => {
    expect(describeQuorum({ required: 2, approvedBy: ["sam"] })).toBe("1 of 2 approvals · approved by sam");
    expect(describeQuorum({ required: 3, approvedBy: [] })).toBe("0 of 3 approvals");
    expect(describeQuorum({ required: 2, approvedBy: ["sam", "kim"] })).toBe("2 of 2 approvals · approved by sam, kim");
  });
});

describe("summaries", () => {
  it("field names in words", () => {
    expect(humanizeKey("due_date")).toBe("Due date");
    expect(humanizeKey("invoice_id")).toBe("Invoice ID");
    expect(humanizeKey("toolCallId")).toBe("Tool call ID");
  });

  it("values in words", () => {
    expect(formatValue(true)).toBe("yes");
    expect(formatValue(null)).toBe("—");
    expect(formatValue(["a", "b"])).toBe("a, b");
    expect(formatValue({ a: 1 })).toBe('{"a":1}');
  });

  it("a tool call in one line; a subagent's task names the subagent", () => {
    expect(summarizeArgs({ invoice_id: "INV-1", amount: 250 })).toBe("invoice_id INV-1, amount 250");
    expect(summarizeArgs({ body: "x".repeat(200) }, 20)).toBe(`body ${"x".repeat(14)}…`);
    expect(summarizeToolCall("task", { description: "Pay 59", subagent_type: "payments_specialist" })).toBe(
      "payments_specialist: Pay 59",
    );
  });

  it("a result in one line: JSON fields, a list's length, or the first line of text", () => {
    expect(summarizeResult('{"paid": 450, "invoice_id": "INV-1"}')).toBe("paid 450, invoice_id INV-1");
    expect(summarizeResult('[{"id": 1}, {"id": 2}]')).toBe("2 items");
    expect(summarizeResult("\nDone.\nMore detail")).toBe("Done.");
    expect(summarizeResult("{not json")).toBe("{not json");
  });
});

describe("inbox rows", () => {
  const row: InboxItem = {
    thread_id: "t",
    interrupt_id: "i",
    action_index: 0,
    kind: "batched",
    agent: "invoices",
    graph_id: "invoices",
    tool: "pay_invoice",
    tool_call_id: "call-1",
    args: {},
    description: "",
    allowed_decisions: ["approve"],
    required_role: "reviewer",
    group: "reviewer",
    owner: "requester1",
    created_at: "2026-12-01T11:00:00Z",
    deadline: null,
    escalated: false,
    age_seconds: 30,
  };

  it("deadline, escalation and quorum when the server sends them; nothing when it does not", () => {
    expect(inboxRowStatus(row)).toEqual({ deadline: null, escalated: false, quorum: null });
    const full = { ...row, deadline: "2026-12-02T11:00:00Z", escalated: true, approvals: { required: 2, approved_by: ["sam"] } };
    expect(inboxRowStatus(full)).toEqual({
      deadline: "2026-12-02T11:00:00Z",
      escalated: true,
      quorum: { required: 2, approvedBy: ["sam"] },
    });
  });

  it("what else waits on the thread, and for whom", () => {
    expect(alsoWaiting(row)).toBeNull();
    const mixed = {
      ...row,
      also_waiting: [
        { interrupt_id: "j", tool: "confirm_address", required_role: "owner" as const },
        { interrupt_id: "k", tool: "pay_invoice", required_role: "supervisor" as const },
      ],
    };
    expect(alsoWaiting(mixed)).toBe("confirm_address (the thread's owner), pay_invoice (a supervisor)");
  });

  it("how long a row has waited", () => {
    expect(age(30)).toBe("30 s");
    expect(age(600)).toBe("10 min");
    expect(age(7200)).toBe("2 h");
  });
});
