/** Interrupt values and schemas shaped like the server's, shared by the unit tests. */
import type {
  ApprovalReceipt,
  AuditRecord,
  ApprovalRequest,
  BatchedApprovalRequest,
  FormRequest,
  ToolApprovalRequest,
} from "../contracts/generated";

export const batched: BatchedApprovalRequest = {
  agent: "support",
  action_requests: [
    {
      name: "issue_refund",
      args: { order_id: "A-1", amount: 250 },
      description: "Refund 250 on A-1",
      tool_call_id: "call_refund",
      agent: "support",
    },
    {
      name: "send_email",
      args: { to: "ann@example.com", body: "Refunded" },
      description: "Email the customer",
      tool_call_id: "call_email",
      agent: "support",
    },
  ],
  review_configs: [
    { action_name: "issue_refund", allowed_decisions: ["approve", "edit", "reject"], required_role: "reviewer" },
    { action_name: "send_email", allowed_decisions: ["approve", "reject"], required_role: "reviewer" },
  ],
};

export const toolApproval: ToolApprovalRequest = {
  type: "tool_approval",
  tool_call_id: "call_delete",
  name: "delete_file",
  args: { path: "reports/old.csv" },
  description: "Delete reports/old.csv",
  agent: "file_manager",
  required_role: "reviewer",
  allowed_decisions: ["approve", "edit", "reject"],
};

export const form: FormRequest = {
  type: "form",
  form: "flight-booking",
  title: "Book flight LH123",
  context: { flight: "LH123", price: 420 },
  agent: "booking_agent",
  tool_call_id: "call_book",
};

export const flightForm: FormRequest = {
  type: "form",
  form: "flight-booking",
  title: "Book Berlin → Lisbon on 2026-12-18 (economy 89)",
  context: { flight_id: "FR8364", origin: "Berlin", destination: "Lisbon", date: "2026-12-18", price: 89 },
  agent: "booking_agent",
  tool_call_id: "call_book",
};

export const approvalRequest: ApprovalRequest = {
  type: "approval_request",
  action: "deploy to production",
  message: "Release 1.4 is ready",
  agent: "deployer",
  tool_call_id: "call_deploy",
};

/** Per-call response_schema as LangChain publishes it: a discriminated union with $defs. */
export const perCallSchema = {
  $defs: {
    ApproveDecision: { properties: { type: { const: "approve", type: "string" } }, required: ["type"], type: "object" },
    EditDecision: {
      properties: { type: { const: "edit", type: "string" }, edited_action: { $ref: "#/$defs/EditedAction" } },
      required: ["type", "edited_action"],
      type: "object",
    },
    EditedAction: {
      properties: { name: { const: "delete_file", type: "string" }, args: { $ref: "#/$defs/delete_file" } },
      required: ["name", "args"],
      type: "object",
    },
    RejectDecision: {
      properties: { type: { const: "reject", type: "string" }, message: { type: "string" } },
      required: ["type"],
      type: "object",
    },
    delete_file: { properties: { path: { type: "string", title: "Path" } }, required: ["path"], type: "object" },
  },
  discriminator: { propertyName: "type" },
  oneOf: [{ $ref: "#/$defs/ApproveDecision" }, { $ref: "#/$defs/EditDecision" }, { $ref: "#/$defs/RejectDecision" }],
};

export const flightFormSchema = {
  properties: {
    decision: { enum: ["approve", "cancel"], type: "string" },
    seat_class: { enum: ["economy", "premium", "business"], type: "string" },
    insurance: { type: "boolean" },
  },
  required: ["decision", "seat_class", "insurance"],
  type: "object",
};

export function receipt(overrides: Partial<ApprovalReceipt> = {}): ApprovalReceipt {
  return {
    interrupt_id: "int-1",
    tool_call_id: "call_delete",
    agent: "file_manager",
    tool: "delete_file",
    requested_args: { path: "reports/old.csv" },
    decision: "approve",
    final_args: { path: "reports/old.csv" },
    message: null,
    reviewer: "reviewer1",
    roles: ["reviewer"],
    decided_at: "2026-11-30T10:00:00Z",
    ...overrides,
  };
}

export function auditRecord(overrides: Partial<AuditRecord> = {}): AuditRecord {
  return { ...receipt(), thread_id: "thread-1", outcome: "accepted", ...overrides };
}
