/** A per-call approval: one tool call, answered on its own by interrupt id. */
import type { Approvals, PendingApproval } from "../../hooks/useApprovals";
import { DecisionControls } from "../DecisionControls";
import { ActionDetails } from "./ActionDetails";
import { CardFrame } from "./CardFrame";

type ToolApproval = Extract<PendingApproval, { kind: "tool_approval" }>;
type Verbs = Pick<Approvals, "approve" | "edit" | "reject" | "respond">;

export function ToolApprovalCard({ item, verbs, busy }: { item: ToolApproval; verbs: Verbs; busy: boolean }) {
  const target = { interruptId: item.id };
  const { value } = item;
  return (
    <CardFrame
      kind={item.kind}
      interruptId={item.id}
      title={`${value.name} needs approval`}
      agent={value.agent}
      status={item.status}
      deadline={item.deadline}
    >
      <ActionDetails request={value} requiredRole={item.deadline.escalated ? "supervisor" : value.required_role} quorum={item.quorum} />
      <DecisionControls
        allowed={item.allowed}
        args={value.args}
        argsSchema={item.editArgsSchema}
        disabled={busy || item.status.phase === "sending" || (item.schemaLoading && item.allowed.includes("edit"))}
        idPrefix={`rjsf_${item.id}`}
        onApprove={() => void verbs.approve(target)}
        onEdit={(args) => void verbs.edit(target, args)}
        onReject={(message) => void verbs.reject(target, message)}
        onRespond={(message) => void verbs.respond(target, message)}
      />
    </CardFrame>
  );
}
