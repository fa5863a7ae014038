/**
 * Runtime shape checks for everything the server hands the reviewer: interrupt values, decisions and
 * approval receipts, each checked against the published contract (`contracts/schema.ts`, Ajv over
 * `hitl/contracts/schemas/contracts.json`). The only place that tells one interrupt shape from another —
 * by the shapes `InterruptShapes` publishes, never by tool name or a list kept here. A form's own
 * shape (its `context` and name) is checked where its card is registered (`components/cards/registry.ts`).
 */
import type {
  ApprovalReceipt,
  ApprovalRequest,
  AuditRecord,
  BatchedApprovalRequest,
  Decision,
  DecisionType,
  FormRequest,
  InboxItem,
  InterruptShapes,
  McpElicitationRequest,
  Me,
  RecordedDecision,
  ToolApprovalRequest,
} from "../contracts/generated";
import {
  conforms,
  DECISION_TYPES,
  RECORDED_DECISIONS,
  SHAPES,
  shapeOf,
  type InterruptKind,
} from "../contracts/schema";

export type JsonObject = { [key: string]: unknown };
export type { InterruptKind };

export function isRecord(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function isDecisionType(value: unknown): value is DecisionType {
  return typeof value === "string" && (DECISION_TYPES as readonly string[]).includes(value);
}

/** What an accepted answer is recorded as: a decision, a form's `answered`, a `cancel`, a `withdrawn` request. */
export function isRecordedDecision(value: unknown): value is RecordedDecision {
  return typeof value === "string" && (RECORDED_DECISIONS as readonly string[]).includes(value);
}

function shapeGuard<K extends InterruptKind>(kind: K): (value: unknown) => value is InterruptShapes[K] {
  return conforms<InterruptShapes[K]>(shapeOf(kind));
}

/** Batched tool approval: `{action_requests, review_configs, agent}`, answered `{decisions}`. */
export const isBatchedApprovalRequest: (value: unknown) => value is BatchedApprovalRequest = shapeGuard("batched");
/** Per-call tool approval: `{type: "tool_approval", ...}`, answered per interrupt id. */
export const isToolApprovalRequest: (value: unknown) => value is ToolApprovalRequest = shapeGuard("tool_approval");
/** A tool's own form: `{type: "form", form, title, context}`; the answer follows response_schema. */
export const isFormRequest: (value: unknown) => value is FormRequest = shapeGuard("form");
/** A sign-off a tool asks for: `{type: "approval_request", action, message}`, answered `{approved, reason}`. */
export const isApprovalRequest: (value: unknown) => value is ApprovalRequest = shapeGuard("approval_request");

/** An MCP server's question mid-call: a form (`requested_schema`) or a link (`url`), answered `{action, content?}`. */
export const isMcpElicitationRequest: (value: unknown) => value is McpElicitationRequest = shapeGuard("mcp_elicitation");

export type ClassifiedInterrupt =
  | { [K in InterruptKind]: { kind: K; id: string; value: InterruptShapes[K] } }[InterruptKind]
  | { kind: "unknown"; id: string; value: unknown };

const GUARDS: ReadonlyArray<readonly [InterruptKind, (value: unknown) => boolean]> = [...SHAPES.keys()].map(
  (kind) => [kind, shapeGuard(kind)] as const,
);

/** Tells an interrupt's shape (the first published kind it conforms to); `null` when it has no id. */
export function classifyInterrupt(interrupt: { id?: string; value?: unknown }): ClassifiedInterrupt | null {
  const { id, value } = interrupt;
  if (typeof id !== "string" || id === "") return null;
  const kind = GUARDS.find(([, guard]) => guard(value))?.[0];
  return (kind ? { kind, id, value } : { kind: "unknown", id, value }) as ClassifiedInterrupt;
}

export const isDecision: (value: unknown) => value is Decision = conforms<Decision>("Decision");

/** One entry of thread state `approval_receipts`: a decision the server accepted. */
export const isApprovalReceipt: (value: unknown) => value is ApprovalReceipt = conforms<ApprovalReceipt>("ApprovalReceipt");

/** One record of `GET /audit/{thread_id}`: an accepted decision, a refused attempt or a tool's failure. */
export const isAuditRecord: (value: unknown) => value is AuditRecord = conforms<AuditRecord>("AuditRecord");

/** One row of `GET /inbox`: one call a person may decide; a row of another shape is left out. */
export const isInboxItem: (value: unknown) => value is InboxItem = conforms<InboxItem>("InboxItem");

/** The body of `GET /me`: who is signed in and the groups they decide as. */
export const isMe: (value: unknown) => value is Me = conforms<Me>("Me");
