/**
 * Picks the card for a pending interrupt from its shape (already told apart by the guards); a
 * form gets the card registered for its name (`registry.ts`), else the generic `FormCard`. Each card
 * offers its buttons only to someone who may decide (`present/deciders.ts`), else says who may.
 */
import type { Approvals, PendingApproval } from "../../hooks/useApprovals";
import { decidability, OWNER, type DeciderRule, type Viewer } from "../../present/deciders";
import { ArgsTable } from "../ArgsTable";
import { Json } from "../Json";
import { ApprovalRequestCard } from "./ApprovalRequestCard";
import { BatchedApprovalCard } from "./BatchedApprovalCard";
import { CardFrame } from "./CardFrame";
import { DeciderNote } from "./DeciderNote";
import { FormCard } from "./FormCard";
import { McpQuestionCard } from "./McpQuestionCard";
import { registeredFormCard } from "./registry";
import { ToolApprovalCard } from "./ToolApprovalCard";

interface InterruptCardProps {
  item: PendingApproval;
  approvals: Approvals;
  busy: boolean;
  /** Who is looking (`GET /me`); null while unknown: no buttons yet. */
  viewer: Viewer | null;
  /** The thread's owner, who answers its forms and owner's questions. */
  owner: string | null;
}

export function InterruptCard({ item, approvals, busy, viewer, owner }: InterruptCardProps) {
  const decide = (rule: DeciderRule) => decidability(rule, viewer, owner);
  switch (item.kind) {
    case "batched":
      return <BatchedApprovalCard item={item} verbs={approvals} busy={busy} decide={decide} />;
    case "tool_approval":
      return <ToolApprovalCard item={item} verbs={approvals} busy={busy} decision={decide(item.decider ?? OWNERLESS)} />;
    case "form": {
      const decision = decide(item.decider ?? OWNERLESS);
      if (!decision.may) {
        return (
          <CardFrame kind={item.kind} interruptId={item.id} subject={item.value.form} title={item.value.title} agent={item.value.agent} status={item.status} deadline={item.deadline}>
            {item.value.context && <ArgsTable args={item.value.context} testId="form-context" />}
            <DeciderNote decision={decision} />
          </CardFrame>
        );
      }
      return (
        registeredFormCard({ item, submit: approvals.submit, busy }) ?? (
          <FormCard item={item} submit={approvals.submit} busy={busy} />
        )
      );
    }
    case "approval_request":
      return <ApprovalRequestCard item={item} submit={approvals.submit} busy={busy} decision={decide(item.decider ?? OWNERLESS)} />;
    case "mcp_elicitation":
      return <McpQuestionCard item={item} submit={approvals.submit} busy={busy} decision={decide(item.decider ?? OWNERLESS)} />;
    case "unknown":
      return (
        <CardFrame kind="unknown" interruptId={item.id} subject="unknown" title="Unrecognised interrupt" status={item.status}>
          <p className="muted">This interrupt has a shape the reviewer app does not know; answer it from the API.</p>
          <Json value={item.value} />
        </CardFrame>
      );
    default:
      return noCard(item);
  }
}

/** A kind the contract publishes and no card shows: `tsc` fails on this call until one does (issue 55). */
function noCard(item: never): never {
  throw new Error(`no card for the interrupt ${JSON.stringify(item)}`);
}

/** A rule no one meets: for an interrupt whose view carries none (never, for these shapes). */
const OWNERLESS: DeciderRule = { requiredRole: OWNER, requestedBy: [], selfApproval: false, approvedBy: [] };
