import { describe, expect, it } from "vitest";
import type { InboxItem } from "../contracts/generated";
import { decidability, type DeciderRule } from "./deciders";
import { alsoWaiting } from "./inboxRow";

const FINANCE: DeciderRule = { requiredRole: "finance", requestedBy: ["carol"], selfApproval: false, approvedBy: [] };

describe("who decides a team's call", () => {
  it("a member of the team may; a reviewer or a supervisor outside it may not; the words name the team", () => {
    const member = decidability(FINANCE, { identity: "ana", role: "reviewer", decides_as: ["finance", "reviewer"] }, "carol");
    expect(member).toEqual({ may: true, who: "Someone in finance decides this, not carol who asked", why: null });
    const outsider = decidability(FINANCE, { identity: "sam", role: "supervisor", decides_as: ["reviewer", "supervisor"] }, "carol");
    expect(outsider.may).toBe(false);
    expect(outsider.why).toBe("You are signed in as sam (supervisor), not in finance.");
    expect(decidability(FINANCE, { identity: "rita", role: "reviewer", decides_as: ["reviewer", "sre"] }, "carol").may).toBe(false);
  });

  it("the asker stays out of their own team's call (four eyes), and the roles decide as `decides_as` says", () => {
    const asker = decidability(FINANCE, { identity: "carol", role: "reviewer", decides_as: ["finance", "reviewer"] }, "carol");
    expect(asker.why).toBe("You asked for it, so someone else decides it (four eyes).");
    const reviewers: DeciderRule = { ...FINANCE, requiredRole: "reviewer" };
    expect(decidability(reviewers, { identity: "sam", role: "supervisor", decides_as: ["reviewer", "supervisor"] }, "carol").may).toBe(true);
    expect(decidability(reviewers, { identity: "ana", role: "reviewer", decides_as: ["finance", "reviewer"] }, "carol").may).toBe(true);
  });
});

describe("a call that names no decider", () => {
  it("is nobody's in the app: no buttons for anyone, and the note says to answer it from the API", () => {
    const nobody: DeciderRule = { ...FINANCE, requiredRole: "" };
    const seen = decidability(nobody, { identity: "sam", role: "supervisor", decides_as: ["reviewer", "supervisor"] }, "carol");
    expect(seen.may).toBe(false);
    expect(seen.who).toContain("names nobody who decides this");
  });
});

describe("what else waits, for a team", () => {
  it("names the team in words, the roles as before", () => {
    const also_waiting = [
      { interrupt_id: "j", tool: "deploy", required_role: "sre" },
      { interrupt_id: "k", tool: "pay_invoice", required_role: "supervisor" },
    ];
    expect(alsoWaiting({ also_waiting } as unknown as InboxItem)).toBe("deploy (someone in sre), pay_invoice (a supervisor)");
  });
});
