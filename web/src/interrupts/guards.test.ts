// @vitest-environment node
// Pure functions, no DOM: no jsdom to set up (the DOM tests are the .tsx files and useLasting).
import { describe, expect, it } from "vitest";
import { definition, SHAPES, shapeOf } from "../contracts/schema";
import { approvalRequest, auditRecord, batched, form, receipt, toolApproval } from "../test/fixtures";
import {
  classifyInterrupt,
  isApprovalReceipt,
  isApprovalRequest,
  isAuditRecord,
  isBatchedApprovalRequest,
  isDecision,
  isFormRequest,
  isToolApprovalRequest,
} from "./guards";

const shapes = { batched, toolApproval, form, approvalRequest };
const guards = {
  batched: isBatchedApprovalRequest,
  toolApproval: isToolApprovalRequest,
  form: isFormRequest,
  approvalRequest: isApprovalRequest,
};
const junk: unknown[] = [null, undefined, 0, "form", [], [batched], {}, { type: "unknown" }];

describe("every shape the contract publishes", () => {
  it("each kind's published examples classify as that kind, after a JSON round trip", () => {
    expect(SHAPES.size).toBeGreaterThan(0);
    for (const kind of SHAPES.keys()) {
      const examples = definition(shapeOf(kind)).examples;
      expect(Array.isArray(examples) && examples.length > 0, `${kind} publishes no example`).toBe(true);
      for (const value of examples as unknown[]) {
        const copied: unknown = JSON.parse(JSON.stringify(value));
        expect(classifyInterrupt({ id: "i", value: copied })?.kind, `the app cannot tell a ${kind}`).toBe(kind);
      }
    }
  });
});

describe("interrupt shape guards", () => {
  it("each guard accepts its own shape and no other", () => {
    for (const [guardName, guard] of Object.entries(guards)) {
      for (const [shapeName, value] of Object.entries(shapes)) {
        expect(guard(value), `${guardName}(${shapeName})`).toBe(guardName === shapeName);
      }
      for (const value of junk) expect(guard(value), `${guardName}(${JSON.stringify(value)})`).toBe(false);
    }
  });

  it("accepts values after a JSON round trip and with the SDK's camelCase aliases added", () => {
    const aliased = {
      ...JSON.parse(JSON.stringify(batched)),
      actionRequests: batched.action_requests,
      reviewConfigs: batched.review_configs,
    };
    expect(isBatchedApprovalRequest(aliased)).toBe(true);
    expect(isToolApprovalRequest(JSON.parse(JSON.stringify(toolApproval)))).toBe(true);
  });

  it("batched: rejects empty actions, bad args, unknown decisions, missing agent", () => {
    expect(isBatchedApprovalRequest({ ...batched, action_requests: [] })).toBe(false);
    const badArgs = { ...batched, action_requests: [{ ...batched.action_requests[0], args: "x" }] };
    expect(isBatchedApprovalRequest(badArgs)).toBe(false);
    const badDecision = {
      ...batched,
      review_configs: [{ action_name: "pay_invoice", allowed_decisions: ["approve", "ignore"], required_role: "reviewer" }],
    };
    expect(isBatchedApprovalRequest(badDecision)).toBe(false);
    const { agent: _agent, ...noAgent } = batched;
    expect(isBatchedApprovalRequest(noAgent)).toBe(false);
  });

  it("per-call: needs the tool_approval tag, a well-formed decider (any group) and object args", () => {
    expect(isToolApprovalRequest({ ...toolApproval, type: "form" })).toBe(false);
    expect(isToolApprovalRequest({ ...toolApproval, required_role: "finance-leads" })).toBe(true);
    expect(isToolApprovalRequest({ ...toolApproval, required_role: "Finance Leads" })).toBe(false);
    expect(isToolApprovalRequest({ ...toolApproval, required_role: 3 })).toBe(false);
    expect(isToolApprovalRequest({ ...toolApproval, args: ["reports/old.csv"] })).toBe(false);
    expect(isToolApprovalRequest({ ...toolApproval, allowed_decisions: ["maybe"] })).toBe(false);
    const { allowed_decisions: _allowed, ...withoutAllowed } = toolApproval;
    expect(isToolApprovalRequest(withoutAllowed)).toBe(true);
  });

  it("form and approval request: need their tag and their text fields", () => {
    expect(isFormRequest({ ...form, title: 3 })).toBe(false);
    expect(isFormRequest({ ...form, context: "INV-7" })).toBe(false);
    const { context: _context, ...noContext } = form;
    expect(isFormRequest(noContext)).toBe(false);
    const { agent: _agent, ...anonymous } = approvalRequest;
    expect(isApprovalRequest(anonymous)).toBe(false);
    expect(isApprovalRequest({ ...approvalRequest, message: undefined })).toBe(false);
    expect(isApprovalRequest({ ...approvalRequest, type: "approval" })).toBe(false);
  });

  it("classifyInterrupt tells the kinds apart and needs an id", () => {
    expect(classifyInterrupt({ id: "a", value: batched })?.kind).toBe("batched");
    expect(classifyInterrupt({ id: "b", value: toolApproval })?.kind).toBe("tool_approval");
    expect(classifyInterrupt({ id: "c", value: form })?.kind).toBe("form");
    expect(classifyInterrupt({ id: "d", value: approvalRequest })?.kind).toBe("approval_request");
    expect(classifyInterrupt({ id: "e", value: { question: "?" } })?.kind).toBe("unknown");
    expect(classifyInterrupt({ value: toolApproval })).toBeNull();
  });
});

describe("decision and receipt guards", () => {
  it("isDecision checks each branch's own fields", () => {
    expect(isDecision({ type: "approve" })).toBe(true);
    expect(isDecision({ type: "edit", edited_action: { name: "t", args: {} } })).toBe(true);
    expect(isDecision({ type: "edit", edited_action: { name: "t" } })).toBe(false);
    expect(isDecision({ type: "reject" })).toBe(true);
    expect(isDecision({ type: "reject", message: 1 })).toBe(false);
    expect(isDecision({ type: "respond" })).toBe(false);
    expect(isDecision({ type: "accept" })).toBe(false);
  });

  it("isApprovalReceipt accepts nulls only where the contract allows them", () => {
    expect(isApprovalReceipt(receipt())).toBe(true);
    expect(isApprovalReceipt(receipt({ final_args: null, message: null }))).toBe(true);
    expect(isApprovalReceipt({ ...receipt(), tool_call_id: null })).toBe(false);
    const { reviewer: _reviewer, ...anonymous } = receipt();
    expect(isApprovalReceipt(anonymous)).toBe(false);
    expect(isApprovalReceipt({ ...receipt(), final_args: "x" })).toBe(false);
    expect(isApprovalReceipt({ ...receipt(), roles: "reviewer" })).toBe(false);
  });

  it("isAuditRecord needs a thread and an outcome the contract names on top of a receipt", () => {
    expect(isAuditRecord(auditRecord())).toBe(true);
    expect(isAuditRecord(auditRecord({ outcome: "refused", decision: "refused", refusal: "403: no" }))).toBe(true);
    expect(isAuditRecord(auditRecord({ outcome: "failed", decision: "failed" }))).toBe(true);
    expect(isAuditRecord({ ...auditRecord(), outcome: "pending" })).toBe(false);
    expect(isAuditRecord(receipt())).toBe(false);
  });
});
