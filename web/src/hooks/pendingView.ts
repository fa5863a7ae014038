/**
 * What a pending-interrupt card shows: the classified interrupt plus its card status, the
 * decisions each action allows, the edit-args schema and, for a batch, the decisions
 * collected so far. Pure; `useApprovals()` builds these on every change.
 */
import type {
  ActionRequest,
  ApprovalRequest,
  BatchedApprovalRequest,
  Decision,
  DecisionType,
  FormRequest,
  McpElicitationRequest,
  ToolApprovalRequest,
} from "../contracts/generated";
import { isRecord, type ClassifiedInterrupt } from "../interrupts/guards";
import { escalatedDeadline, type Expiry } from "../present/deadline";
import { OWNER_ANSWERS, type DeciderRule } from "../present/deciders";
import { quorumOfRequest, type Quorum } from "../present/quorum";
import {
  allowedDecisionsFromSchema,
  batchedDecisionNode,
  editArgsSchema,
  type JsonSchema,
} from "../interrupts/responseSchema";

export type CardStatus =
  | { phase: "idle" }
  | { phase: "sending" }
  | { phase: "error"; message: string };

export const IDLE: CardStatus = { phase: "idle" };

export interface ActionView {
  index: number;
  request: ActionRequest;
  allowed: DecisionType[];
  requiredRole: string | null;
  editArgsSchema: JsonSchema | null;
  draft: Decision | undefined;
  /** Set when the call needs more than one person's approval. */
  quorum: Quorum | null;
  /** Who may decide this call (the card offers its buttons to them only). */
  decider: DeciderRule;
}

/** When the approval must be decided by, and what happens then. */
export interface DeadlineInfo {
  deadline: string | null;
  onExpiry: Expiry | null;
  escalated: boolean;
}

interface PendingBase {
  id: string;
  status: CardStatus;
  /** Still reading the interrupt's response_schema from thread state. */
  schemaLoading: boolean;
  deadline: DeadlineInfo;
  /** Who may answer the interrupt; a batch says it per action (`ActionView.decider`), an unknown shape never. */
  decider: DeciderRule | null;
}

export type PendingApproval =
  | (PendingBase & { kind: "batched"; value: BatchedApprovalRequest; actions: ActionView[] })
  | (PendingBase & {
      kind: "tool_approval";
      value: ToolApprovalRequest;
      allowed: DecisionType[];
      editArgsSchema: JsonSchema | null;
      quorum: Quorum | null;
    })
  | (PendingBase & { kind: "form"; value: FormRequest; responseSchema: JsonSchema | null })
  | (PendingBase & { kind: "approval_request"; value: ApprovalRequest })
  | (PendingBase & { kind: "mcp_elicitation"; value: McpElicitationRequest })
  | (PendingBase & { kind: "unknown"; value: unknown });

const FALLBACK_DECISIONS: DecisionType[] = ["approve", "reject"];

const names = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];

/** Who decides a gated call, from its review config or per-call value; an escalated one needs a supervisor. */
function deciderOf(config: unknown, requestedBy: unknown, escalated: boolean): DeciderRule {
  const record = isRecord(config) ? config : {};
  const role = record.required_role;
  return {
    requiredRole: escalated ? "supervisor" : role === "owner" || role === "supervisor" ? role : "reviewer",
    requestedBy: names(requestedBy),
    selfApproval: record.self_approval === true,
    approvedBy: names(record.approved_by),
  };
}

function batchedActions(
  item: Extract<ClassifiedInterrupt, { kind: "batched" }>,
  schema: JsonSchema | null | undefined,
  drafts: readonly (Decision | undefined)[] | undefined,
  escalated: boolean,
): ActionView[] {
  const { action_requests: requests, review_configs: configs } = item.value;
  return requests.map((request, index) => {
    const config =
      configs[index]?.action_name === request.name
        ? configs[index]
        : configs.find((c) => c.action_name === request.name);
    const node = schema ? batchedDecisionNode(schema, index) : null;
    return {
      index,
      request,
      allowed: config?.allowed_decisions ?? FALLBACK_DECISIONS,
      requiredRole: config?.required_role ?? null,
      editArgsSchema: schema && node ? editArgsSchema(schema, node) : null,
      draft: drafts?.[index],
      quorum: quorumOfRequest(config),
      decider: deciderOf(config, item.value.requested_by, escalated),
    };
  });
}

function toolApprovalAllowed(value: ToolApprovalRequest, schema: JsonSchema | null | undefined) {
  if (value.allowed_decisions?.length) return value.allowed_decisions;
  const fromSchema = schema ? allowedDecisionsFromSchema(schema) : [];
  return fromSchema.length ? fromSchema : FALLBACK_DECISIONS;
}

interface CardState {
  status: CardStatus;
  /** The interrupt's response_schema: `undefined` while unknown, `null` when it has none. */
  schema: JsonSchema | null | undefined;
  schemaKnown: boolean;
  drafts: readonly (Decision | undefined)[] | undefined;
  /** When the server escalated this approval (its audit trail says so), else null. */
  escalatedAt?: string | null;
}

/** The deadline an interrupt value carries, moved on by an escalation when there was one. */
export function deadlineOf(value: unknown, escalatedAt: string | null | undefined): DeadlineInfo {
  const record = isRecord(value) ? value : {};
  const stamped = typeof record.deadline === "string" ? record.deadline : null;
  const onExpiry = record.on_expiry === "reject" || record.on_expiry === "escalate" ? record.on_expiry : null;
  if (!escalatedAt) return { deadline: stamped, onExpiry, escalated: false };
  const seconds = typeof record.escalated_seconds === "number" ? record.escalated_seconds : null;
  return { deadline: escalatedDeadline(escalatedAt, seconds), onExpiry: "reject", escalated: true };
}

export function toPendingApproval(item: ClassifiedInterrupt, state: CardState): PendingApproval {
  const { schema } = state;
  const deadline = deadlineOf(item.value, state.escalatedAt);
  const base = {
    id: item.id,
    status: state.status,
    schemaLoading: item.kind !== "approval_request" && !state.schemaKnown,
    deadline,
    decider: null,
  };
  switch (item.kind) {
    case "batched":
      return { ...base, ...item, actions: batchedActions(item, schema, state.drafts, deadline.escalated) };
    case "tool_approval":
      return {
        ...base,
        ...item,
        allowed: toolApprovalAllowed(item.value, schema),
        editArgsSchema: schema ? editArgsSchema(schema) : null,
        quorum: quorumOfRequest(item.value),
        decider: deciderOf(item.value, item.value.requested_by, deadline.escalated),
      };
    case "form":
      return { ...base, ...item, responseSchema: schema ?? null, decider: OWNER_ANSWERS };
    case "approval_request":
      // A sign-off is a reviewer's (the server's rule), never its asker's.
      return { ...base, ...item, decider: deciderOf({}, item.value.requested_by, deadline.escalated) };
    case "mcp_elicitation":
      // The thread's owner answers an MCP server's question, unless the server's declaration names a group.
      return {
        ...base,
        ...item,
        schemaLoading: false,
        decider: item.value.required_role === "owner" ? OWNER_ANSWERS : deciderOf(item.value, [], deadline.escalated),
      };
    default:
      return { ...base, ...item };
  }
}

/** Which agents and tool calls the pending approvals hold up (their tasks and calls say "waiting"). */
export function waitingOn(pending: readonly PendingApproval[]): { agents: Set<string>; calls: Set<string> } {
  const agents = new Set<string>();
  const calls = new Set<string>();
  for (const item of pending) {
    const value = isRecord(item.value) ? item.value : {};
    if (typeof value.agent === "string") agents.add(value.agent);
    if (typeof value.tool_call_id === "string") calls.add(value.tool_call_id);
    if (item.kind === "batched") {
      for (const action of item.value.action_requests) {
        calls.add(action.tool_call_id);
        agents.add(action.agent);
      }
    }
  }
  return { agents, calls };
}
