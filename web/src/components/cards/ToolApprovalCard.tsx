/** A per-call approval: one tool call, answered on its own by interrupt id. */
import type { Approvals, PendingApproval } from "../../hooks/useApprovals";
import type { Decidability } from "../../present/deciders";
import { DecisionControls } from "../DecisionControls";
import { ActionDetails } from "./ActionDetails";
import { CardFrame } from "./CardFrame";
import { DeciderNote } from "./DeciderNote";

type ToolApproval = Extract<PendingApproval, { kind: "tool_approval" }>;
type Verbs = Pick<Approvals, "approve" | "edit" | "reject" | "respond">;

interface ToolApprovalCardProps {
  item: ToolApproval;
  verbs: Verbs;
  busy: boolean;
  /** Whether the person looking may decide the call, and who may. */
  decision: Decidability;
}

export function ToolApprovalCard({ item, verbs, busy, decision }: ToolApprovalCardProps) {
  const target = { interruptId: item.id };
  const { value } = item;
  return (
    <CardFrame
      kind={item.kind}
      interruptId={item.id}
      subject={value.name}
      title={`${value.name} needs approval`}
      agent={value.agent}
      status={item.status}
      deadline={item.deadline}
    >
      <ActionDetails request={value} requiredRole={item.decider?.requiredRole ?? value.required_role} quorum={item.quorum} />
      {decision.may ? (
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
      ) : (
        <DeciderNote decision={decision} />
      )}
    </CardFrame>
  );
}
