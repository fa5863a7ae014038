// @vitest-environment node
// Pure functions, no DOM: no jsdom to set up (the DOM tests are the .tsx files and useLasting).
import { describe, expect, it } from "vitest";
import { batched, toolApproval } from "../test/fixtures";
import { deadlineOf, waitingOn, type PendingApproval } from "./pendingView";

const base = { status: { phase: "idle" } as const, schemaLoading: false, deadline: deadlineOf({}, null) };

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
  it("as stamped; after an escalation, the escalation's own wait from its time", () => {
    const value = { deadline: "2026-12-02T12:00:00Z", on_expiry: "escalate", escalated_seconds: 600 };
    expect(deadlineOf(value, null)).toEqual({ deadline: "2026-12-02T12:00:00Z", onExpiry: "escalate", escalated: false });
    expect(deadlineOf(value, "2026-12-01T12:00:00Z")).toEqual({
      deadline: "2026-12-01T12:10:00.000Z",
      onExpiry: "reject",
      escalated: true,
    });
    expect(deadlineOf({}, null)).toEqual({ deadline: null, onExpiry: null, escalated: false });
  });
});
