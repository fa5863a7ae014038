/**
 * Runtime shape checks for everything the server hands the reviewer: interrupt values,
 * decisions and approval receipts. The only place that tells one interrupt shape from
 * another — by shape, never by tool name. Types come from the generated contracts. A form's
 * own shape (its `context` and name) is checked where its card is registered (`components/cards/registry.ts`).
 */
import type {
  ActionRequest,
  ApprovalReceipt,
  AuditRecord,
  ApprovalRequest,
  BatchedApprovalRequest,
  Decision,
  DecisionType,
  FormRequest,
  McpElicitationRequest,
  RecordedDecision,
  ReviewConfig,
  ToolApprovalRequest,
} from "../contracts/generated";

export type JsonObject = { [key: string]: unknown };

const DECISION_TYPES: Record<DecisionType, true> = {
  approve: true,
  edit: true,
  reject: true,
  respond: true,
};
const RECORDED_DECISIONS: Record<RecordedDecision, true> = {
  ...DECISION_TYPES,
  answered: true,
  cancel: true,
  declined: true,
  cancelled: true,
  withdrawn: true,
};
const ROLES: Record<ToolApprovalRequest["required_role"], true> = {
  owner: true,
  reviewer: true,
  supervisor: true,
};

export function isRecord(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const isString = (value: unknown): value is string => typeof value === "string";
const isOptional = (value: unknown, check: (v: unknown) => boolean) =>
  value === undefined || check(value);

export function isDecisionType(value: unknown): value is DecisionType {
  return isString(value) && Object.hasOwn(DECISION_TYPES, value);
}

/** What an accepted answer is recorded as: a decision, a form's `answered`, a `cancel`, a `withdrawn` request. */
export function isRecordedDecision(value: unknown): value is RecordedDecision {
  return isString(value) && Object.hasOwn(RECORDED_DECISIONS, value);
}

function isRole(value: unknown): value is ToolApprovalRequest["required_role"] {
  return isString(value) && Object.hasOwn(ROLES, value);
}

const isDecisionTypeList = (value: unknown): value is DecisionType[] =>
  Array.isArray(value) && value.every(isDecisionType);

export function isActionRequest(value: unknown): value is ActionRequest {
  return (
    isRecord(value) &&
    isString(value.name) &&
    isRecord(value.args) &&
    isString(value.description) &&
    isString(value.tool_call_id) &&
    isString(value.agent)
  );
}

export function isReviewConfig(value: unknown): value is ReviewConfig {
  return (
    isRecord(value) &&
    isString(value.action_name) &&
    isDecisionTypeList(value.allowed_decisions) &&
    isRole(value.required_role)
  );
}

/** Batched tool approval: `{action_requests, review_configs, agent}`, answered `{decisions}`. */
export function isBatchedApprovalRequest(value: unknown): value is BatchedApprovalRequest {
  return (
    isRecord(value) &&
    Array.isArray(value.action_requests) &&
    value.action_requests.length > 0 &&
    value.action_requests.every(isActionRequest) &&
    Array.isArray(value.review_configs) &&
    value.review_configs.every(isReviewConfig) &&
    isString(value.agent)
  );
}

/** Per-call tool approval: `{type: "tool_approval", ...}`, answered per interrupt id. */
export function isToolApprovalRequest(value: unknown): value is ToolApprovalRequest {
  return (
    isRecord(value) &&
    value.type === "tool_approval" &&
    isString(value.tool_call_id) &&
    isString(value.name) &&
    isRecord(value.args) &&
    isString(value.description) &&
    isString(value.agent) &&
    isRole(value.required_role) &&
    isOptional(value.allowed_decisions, isDecisionTypeList)
  );
}

/** A tool's own form: `{type: "form", form, title, context}`; the answer follows response_schema. */
export function isFormRequest(value: unknown): value is FormRequest {
  return (
    isRecord(value) &&
    value.type === "form" &&
    isString(value.form) &&
    isString(value.title) &&
    isRecord(value.context) &&
    isString(value.agent) &&
    isString(value.tool_call_id)
  );
}

/** A sign-off a tool asks for: `{type: "approval_request", action, message}`, answered `{approved, reason}`. */
export function isApprovalRequest(value: unknown): value is ApprovalRequest {
  return (
    isRecord(value) &&
    value.type === "approval_request" &&
    isString(value.action) &&
    isString(value.message) &&
    isString(value.agent) &&
    isString(value.tool_call_id)
  );
}

/**
 * An MCP server's question mid-call: `{type: "mcp_elicitation", mode, message, ...}`, a form
 * (`requested_schema`) or a link (`url`), answered `{action: "accept" | "decline" | "cancel", content?}`.
 */
export function isMcpElicitationRequest(value: unknown): value is McpElicitationRequest {
  return (
    isRecord(value) &&
    value.type === "mcp_elicitation" &&
    isString(value.agent) &&
    isString(value.tool_call_id) &&
    isString(value.name) &&
    isRecord(value.args) &&
    isRecord(value.mcp) &&
    isString(value.mcp.server) &&
    isString(value.mcp.tool) &&
    isString(value.message) &&
    isString(value.question) &&
    isString(value.required_role) &&
    ((value.mode === "form" && isRecord(value.requested_schema)) || (value.mode === "url" && isString(value.url)))
  );
}

export type ClassifiedInterrupt =
  | { kind: "batched"; id: string; value: BatchedApprovalRequest }
  | { kind: "tool_approval"; id: string; value: ToolApprovalRequest }
  | { kind: "form"; id: string; value: FormRequest }
  | { kind: "approval_request"; id: string; value: ApprovalRequest }
  | { kind: "mcp_elicitation"; id: string; value: McpElicitationRequest }
  | { kind: "unknown"; id: string; value: unknown };

export type InterruptKind = ClassifiedInterrupt["kind"];

/** Tells an interrupt's shape; `null` when it has no id (it could not be answered by id). */
export function classifyInterrupt(interrupt: { id?: string; value?: unknown }): ClassifiedInterrupt | null {
  const { id, value } = interrupt;
  if (!isString(id) || id === "") return null;
  if (isBatchedApprovalRequest(value)) return { kind: "batched", id, value };
  if (isToolApprovalRequest(value)) return { kind: "tool_approval", id, value };
  if (isFormRequest(value)) return { kind: "form", id, value };
  if (isApprovalRequest(value)) return { kind: "approval_request", id, value };
  if (isMcpElicitationRequest(value)) return { kind: "mcp_elicitation", id, value };
  return { kind: "unknown", id, value };
}

export function isDecision(value: unknown): value is Decision {
  if (!isRecord(value)) return false;
  switch (value.type) {
    case "approve":
      return true;
    case "edit":
      return (
        isRecord(value.edited_action) &&
        isString(value.edited_action.name) &&
        isRecord(value.edited_action.args)
      );
    case "reject":
      return isOptional(value.message, isString);
    case "respond":
      return isString(value.message);
    default:
      return false;
  }
}

const isNullable = (check: (v: unknown) => boolean) => (value: unknown) => value === null || check(value);

/** One entry of thread state `approval_receipts`: a decision the server accepted. */
export function isApprovalReceipt(value: unknown): value is ApprovalReceipt {
  return (
    isRecord(value) &&
    isString(value.interrupt_id) &&
    isString(value.tool_call_id) &&
    isString(value.agent) &&
    isString(value.tool) &&
    isRecord(value.requested_args) &&
    isString(value.decision) &&
    isNullable(isRecord)(value.final_args) &&
    isNullable(isString)(value.message) &&
    isString(value.reviewer) &&
    Array.isArray(value.roles) &&
    value.roles.every(isString) &&
    isString(value.decided_at)
  );
}

/** One record of `GET /audit/{thread_id}`: an accepted decision or a refused attempt. */
export function isAuditRecord(value: unknown): value is AuditRecord {
  return (
    isRecord(value) &&
    isString(value.thread_id) &&
    (value.outcome === "accepted" || value.outcome === "refused") &&
    isOptional(value.refusal, isString) &&
    isApprovalReceipt(value)
  );
}
