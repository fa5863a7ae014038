/**
 * Picks the card for a pending interrupt from its shape (already told apart by the guards); a
 * form gets the card registered for its name (`registry.ts`), else the generic `FormCard`.
 */
import type { Approvals, PendingApproval } from "../../hooks/useApprovals";
import { Json } from "../Json";
import { ApprovalRequestCard } from "./ApprovalRequestCard";
import { BatchedApprovalCard } from "./BatchedApprovalCard";
import { CardFrame } from "./CardFrame";
import { FormCard } from "./FormCard";
import { registeredFormCard } from "./registry";
import { ToolApprovalCard } from "./ToolApprovalCard";

export function InterruptCard({ item, approvals, busy }: { item: PendingApproval; approvals: Approvals; busy: boolean }) {
  switch (item.kind) {
    case "batched":
      return <BatchedApprovalCard item={item} verbs={approvals} busy={busy} />;
    case "tool_approval":
      return <ToolApprovalCard item={item} verbs={approvals} busy={busy} />;
    case "form":
      return (
        registeredFormCard({ item, submit: approvals.submit, busy }) ?? (
          <FormCard item={item} submit={approvals.submit} busy={busy} />
        )
      );
    case "approval_request":
      return <ApprovalRequestCard item={item} submit={approvals.submit} busy={busy} />;
    default:
      return (
        <CardFrame kind="unknown" interruptId={item.id} title="Unrecognised interrupt" status={item.status}>
          <p className="muted">This interrupt has a shape the reviewer app does not know; answer it from the API.</p>
          <Json value={item.value} />
        </CardFrame>
      );
  }
}
