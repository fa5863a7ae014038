/** Interrupt values and schemas shaped like the server's, shared by the unit tests. */
import type {
  ApprovalReceipt,
  AuditRecord,
  ApprovalRequest,
  BatchedApprovalRequest,
  FormRequest,
  McpElicitationRequest,
  ToolApprovalRequest,
} from "../contracts/generated";

/** An MCP server's question in form mode, its words carrying markup that must stay text. */
export const mcpQuestion: McpElicitationRequest = {
  type: "mcp_elicitation",
  agent: "assistant",
  tool_call_id: "call_credit",
  name: "crm_close_account",
  args: { account_id: "AC-7" },
  mcp: { server: "crm", tool: "close_account", input_schema_sha256: "ab".repeat(32) },
  mode: "form",
  message: "<b>Why</b> close AC-7? <script>alert(1)</script>",
  requested_schema: {
    type: "object",
    properties: { reason: { type: "string", title: "Reason", minLength: 3 } },
    required: ["reason"],
  },
  question: "cd".repeat(32),
  required_role: "owner",
};

export const batched: BatchedApprovalRequest = {
  agent: "invoices",
  action_requests: [
    {
      name: "pay_invoice",
      args: { invoice_id: "INV-1", amount: 250 },
      description: "Pay 250 on INV-1",
      tool_call_id: "call_pay",
      agent: "invoices",
    },
    {
      name: "send_reminder",
      args: { to: "ann@example.com", body: "Paid" },
      description: "Remind the customer",
      tool_call_id: "call_remind",
      agent: "invoices",
    },
  ],
  review_configs: [
    { action_name: "pay_invoice", allowed_decisions: ["approve", "edit", "reject"], required_role: "reviewer" },
    { action_name: "send_reminder", allowed_decisions: ["approve", "reject"], required_role: "reviewer" },
  ],
};

export const toolApproval: ToolApprovalRequest = {
  type: "tool_approval",
  tool_call_id: "call_archive",
  name: "archive_file",
  args: { path: "reports/old.csv" },
  description: "Delete reports/old.csv",
  agent: "archivist",
  required_role: "reviewer",
  allowed_decisions: ["approve", "edit", "reject"],
};

export const form: FormRequest = {
  type: "form",
  form: "payment-terms",
  title: "Terms for invoice INV-7",
  context: { invoice: "INV-7", amount: 420 },
  agent: "collector",
  tool_call_id: "call_terms",
};

export const approvalRequest: ApprovalRequest = {
  type: "approval_request",
  action: "release 1.4 to production",
  message: "Release 1.4 is ready",
  agent: "releaser",
  tool_call_id: "call_release",
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
      properties: { name: { const: "archive_file", type: "string" }, args: { $ref: "#/$defs/archive_file" } },
      required: ["name", "args"],
      type: "object",
    },
    RejectDecision: {
      properties: { type: { const: "reject", type: "string" }, message: { type: "string" } },
      required: ["type"],
      type: "object",
    },
    archive_file: { properties: { path: { type: "string", title: "Path" } }, required: ["path"], type: "object" },
  },
  discriminator: { propertyName: "type" },
  oneOf: [{ $ref: "#/$defs/ApproveDecision" }, { $ref: "#/$defs/EditDecision" }, { $ref: "#/$defs/RejectDecision" }],
};

/** A form's own answer schema (any model a tool registers with `hitl.contracts.forms.register_form`). */
export const formSchema = {
  properties: {
    decision: { enum: ["approve", "cancel"], type: "string" },
    terms: { enum: ["net-15", "net-30", "net-60"], type: "string" },
    reminder: { type: "boolean" },
  },
  required: ["decision", "terms", "reminder"],
  type: "object",
};

export function receipt(overrides: Partial<ApprovalReceipt> = {}): ApprovalReceipt {
  return {
    interrupt_id: "int-1",
    tool_call_id: "call_archive",
    agent: "archivist",
    tool: "archive_file",
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
