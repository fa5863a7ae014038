// @vitest-environment node
// Pure functions, no DOM: no jsdom to set up (the DOM tests are the .tsx files and useLasting).
import { describe, expect, it } from "vitest";
import { verdictKey, verdictsOf } from "./useReceiptVerification";

describe("receipt verdicts", () => {
  it("keys each verdict by interrupt and tool call; ignores what is not a verdict", () => {
    const good = { interrupt_id: "i1", tool_call_id: "c1", tool: "pay_invoice", decision: "approve", decided_at: "t", verified: true, problems: [] };
    const bad = { ...good, tool_call_id: "c2", verified: false, problems: ["final_args_sha256 differs"] };
    const verdicts = verdictsOf({ thread_id: "t", ok: false, receipts: [good, bad, { interrupt_id: 1 }], trail_problems: [], notes: [] });
    expect([...verdicts.keys()]).toEqual(["i1|c1", "i1|c2"]);
    expect(verdicts.get(verdictKey({ interrupt_id: "i1", tool_call_id: "c2" }))?.problems).toEqual(["final_args_sha256 differs"]);
    expect(verdictsOf("not a body").size).toBe(0);
  });
});
