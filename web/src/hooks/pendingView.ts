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
import { defaultDecider, defaultEscalation, type InterruptKind } from "../contracts/schema";
import { isRecord, type ClassifiedInterrupt } from "../interrupts/guards";
import { escalatedDeadline, type Expiry } from "../present/deadline";
import type { DeciderRule } from "../present/deciders";
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
  /** The group an overdue approval goes to (its `escalate_to`, else the contract's default). */
  escalatesTo: string | null;
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

/** What a call's review config (a batch's) or a per-call value says of who decides it. */
interface DeciderFields {
  required_role?: string;
  self_approval?: boolean;
  approved_by?: string[];
}

/**
 * Who decides a call: its `required_role`, else who answers its kind by the contract (a form: the owner);
 * once escalated, the group the deadline escalates it to. A call that names none ("": a batch whose
 * review configs do not match its calls) is nobody's here: the server judges any answer sent.
 */
function deciderOf(
  kind: InterruptKind,
  fields: DeciderFields,
  requestedBy: readonly string[] | undefined,
  deadline: DeadlineInfo,
): DeciderRule {
  const named = fields.required_role ?? defaultDecider(kind) ?? "";
  const requiredRole = deadline.escalated && deadline.escalatesTo ? deadline.escalatesTo : named;
  return {
    requiredRole,
    requestedBy: requestedBy ?? [],
    selfApproval: fields.self_approval === true,
    approvedBy: fields.approved_by ?? [],
  };
}

function batchedActions(
  item: Extract<ClassifiedInterrupt, { kind: "batched" }>,
  schema: JsonSchema | null | undefined,
  drafts: readonly (Decision | undefined)[] | undefined,
  deadline: DeadlineInfo,
): ActionView[] {
  const { action_requests: requests, review_configs: configs } = item.value;
  return requests.map((request, index) => {
    const config =
      configs[index]?.action_name === request.name
        ? configs[index]
        : configs.find((c) => c.action_name === request.name);
    const node = schema ? batchedDecisionNode(schema, index) : null;
    const decider = deciderOf(item.kind, config ?? {}, item.value.requested_by, deadline);
    return {
      index,
      request,
      allowed: config?.allowed_decisions ?? [],
      requiredRole: decider.requiredRole,
      editArgsSchema: schema && node ? editArgsSchema(schema, node) : null,
      draft: drafts?.[index],
      quorum: quorumOfRequest(config),
      decider,
    };
  });
}

/** The decisions a per-call request allows: its own list, else its answer's schema (none until it is read). */
function toolApprovalAllowed(value: ToolApprovalRequest, schema: JsonSchema | null | undefined): DecisionType[] {
  if (value.allowed_decisions?.length) return value.allowed_decisions;
  return schema ? allowedDecisionsFromSchema(schema) : [];
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

/** What a checked interrupt value may say of its deadline (`BatchedApprovalRequest`'s fields, and its kin's). */
type DeadlineFields = Pick<BatchedApprovalRequest, "deadline" | "on_expiry" | "escalated_seconds" | "escalate_to">;

/** The deadline a classified interrupt carries, moved on by an escalation when there was one. */
export function deadlineOf(
  item: Pick<ClassifiedInterrupt, "kind" | "value">,
  escalatedAt: string | null | undefined,
): DeadlineInfo {
  // Checked against its kind's published shape; the deadline fields are optional on every kind that has them.
  const fields = (item.kind === "unknown" ? {} : item.value) as DeadlineFields;
  const escalatesTo = fields.escalate_to ?? (item.kind === "unknown" ? undefined : defaultEscalation(item.kind)) ?? null;
  const onExpiry = fields.on_expiry ?? null;
  if (!escalatedAt) return { deadline: fields.deadline ?? null, onExpiry, escalated: false, escalatesTo };
  const deadline = escalatedDeadline(escalatedAt, fields.escalated_seconds);
  return { deadline, onExpiry: "reject", escalated: true, escalatesTo };
}

export function toPendingApproval(item: ClassifiedInterrupt, state: CardState): PendingApproval {
  const { schema } = state;
  const deadline = deadlineOf(item, state.escalatedAt);
  const base = {
    id: item.id,
    status: state.status,
    schemaLoading: item.kind !== "approval_request" && !state.schemaKnown,
    deadline,
    decider: null,
  };
  switch (item.kind) {
    case "batched":
      return { ...base, ...item, actions: batchedActions(item, schema, state.drafts, deadline) };
    case "tool_approval":
      return {
        ...base,
        ...item,
        allowed: toolApprovalAllowed(item.value, schema),
        editArgsSchema: schema ? editArgsSchema(schema) : null,
        quorum: quorumOfRequest(item.value),
        decider: deciderOf(item.kind, item.value, item.value.requested_by, deadline),
      };
    case "form":
      // The thread's owner answers their own form (unless it names another decider): no four eyes.
      return {
        ...base,
        ...item,
        responseSchema: schema ?? null,
        decider: deciderOf(item.kind, { ...item.value, self_approval: true }, [], deadline),
      };
    case "approval_request":
      // A sign-off is a reviewer's by the contract's default (the server's rule), never its asker's.
      return { ...base, ...item, decider: deciderOf(item.kind, item.value, item.value.requested_by, deadline) };
    case "mcp_elicitation":
      // The thread's owner answers an MCP server's question (its own), unless the server's declaration names a
      // group; who asked may answer it (the owner's question is the owner's).
      return {
        ...base,
        ...item,
        schemaLoading: false,
        decider: deciderOf(item.kind, { ...item.value, self_approval: true }, [], deadline),
      };
    case "unknown":
      return { ...base, ...item };
    default:
      return unhandled(item);
  }
}

/** A kind the contract publishes and this view does not handle: `tsc` fails on the call (issue 55). */
function unhandled(item: never): never {
  throw new Error(`no view for the interrupt ${JSON.stringify(item)}`);
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
