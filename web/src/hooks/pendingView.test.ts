// @vitest-environment node
// Pure functions, no DOM: no jsdom to set up (the DOM tests are the .tsx files and useLasting).
import { describe, expect, it } from "vitest";
import { approvalRequest, batched, form, toolApproval } from "../test/fixtures";
import { deadlineOf, toPendingApproval, waitingOn, type PendingApproval } from "./pendingView";

const base = { status: { phase: "idle" } as const, schemaLoading: false, deadline: deadlineOf({ kind: "unknown", value: {} }, null), decider: null };

describe("what pending approvals hold up", () => {
  it("every action of a batch and a per-call approval: their agents and tool calls", () => {
    const pending: PendingApproval[] = [
      { ...base, kind: "batched", id: "b", value: batched, actions: [] },
      { ...base, kind: "tool_approval", id: "t", value: toolApproval, allowed: [], editArgsSchema: null, quorum: null },
    ];
    const { agents, calls } = waitingOn(pending);
    expect([...calls].sort()).toEqual(
      [...batched.action_requests.map((a) => a.tool_call_id), toolApproval.tool_call_id].sort(),
    );
    expect(agents.has(toolApproval.agent)).toBe(true);
    expect(agents.has(batched.agent)).toBe(true);
  });
});

describe("deadline of an interrupt", () => {
  it("as stamped; after an escalation, the escalation's own wait from its time, to the contract's group", () => {
    const stamped = { deadline: "2026-12-02T12:00:00Z", on_expiry: "escalate", escalated_seconds: 600 } as const;
    const item = { kind: "tool_approval", value: { ...toolApproval, ...stamped } } as const;
    expect(deadlineOf(item, null)).toEqual({
      deadline: "2026-12-02T12:00:00Z",
      onExpiry: "escalate",
      escalated: false,
      escalatesTo: "supervisor",
    });
    expect(deadlineOf(item, "2026-12-01T12:00:00Z")).toEqual({
      deadline: "2026-12-01T12:10:00.000Z",
      onExpiry: "reject",
      escalated: true,
      escalatesTo: "supervisor",
    });
    const team = { kind: "tool_approval", value: { ...toolApproval, ...stamped, escalate_to: "finance-leads" } } as const;
    expect(deadlineOf(team, null).escalatesTo).toBe("finance-leads");
    expect(deadlineOf({ kind: "unknown", value: {} }, null)).toEqual({
      deadline: null,
      onExpiry: null,
      escalated: false,
      escalatesTo: null,
    });
  });
});

describe("who decides, as the interrupt says", () => {
  const state = { status: { phase: "idle" } as const, schema: null, schemaKnown: true, drafts: undefined };

  it("per call and per action: the required role, who asked, self-approval and a quorum's approvers", () => {
    const value = { ...toolApproval, requested_by: ["ana"], self_approval: true, approvals_required: 2, approved_by: ["sam"] };
    const item = toPendingApproval({ kind: "tool_approval", id: "t", value }, state);
    expect(item.decider).toEqual({ requiredRole: "reviewer", requestedBy: ["ana"], selfApproval: true, approvedBy: ["sam"] });
    const batch = toPendingApproval({ kind: "batched", id: "b", value: { ...batched, requested_by: ["ana"] } }, state);
    expect(batch.kind === "batched" && batch.actions.map((a) => a.decider)).toEqual([
      { requiredRole: "reviewer", requestedBy: ["ana"], selfApproval: false, approvedBy: [] },
      { requiredRole: "reviewer", requestedBy: ["ana"], selfApproval: false, approvedBy: [] },
    ]);
  });

  it("escalated: its escalate_to, else a supervisor; a form: the thread's owner; a sign-off: a reviewer, never its asker", () => {
    const escalatedAt = "2026-12-01T12:00:00Z";
    const escalated = toPendingApproval({ kind: "tool_approval", id: "t", value: toolApproval }, { ...state, escalatedAt });
    expect(escalated.decider?.requiredRole).toBe("supervisor");
    const toTeam = { ...batched, escalate_to: "finance-leads" };
    const team = toPendingApproval({ kind: "batched", id: "b", value: toTeam }, { ...state, escalatedAt });
    expect(team.kind === "batched" && team.actions.map((a) => a.decider.requiredRole)).toEqual(["finance-leads", "finance-leads"]);
    expect(toPendingApproval({ kind: "form", id: "f", value: form }, state).decider?.requiredRole).toBe("owner");
    const signOff = toPendingApproval({ kind: "approval_request", id: "a", value: { ...approvalRequest, requested_by: ["ana"] } }, state);
    expect(signOff.decider).toEqual({ requiredRole: "reviewer", requestedBy: ["ana"], selfApproval: false, approvedBy: [] });
  });
});
