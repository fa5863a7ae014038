/** A batched request: one card per action; the batch is sent once every action is decided. */
import type { Approvals, PendingApproval } from "../../hooks/useApprovals";
import type { Decidability, DeciderRule } from "../../present/deciders";
import { DecisionControls } from "../DecisionControls";
import { ActionDetails } from "./ActionDetails";
import { CardFrame } from "./CardFrame";
import { DeciderNote } from "./DeciderNote";

type Batched = Extract<PendingApproval, { kind: "batched" }>;
type Verbs = Pick<Approvals, "approve" | "edit" | "reject" | "respond" | "undo">;

function describeDraft(draft: NonNullable<Batched["actions"][number]["draft"]>): string {
  if (draft.type === "reject" || draft.type === "respond") {
    return draft.message ? `${draft.type}: ${draft.message}` : draft.type;
  }
  return draft.type;
}

interface BatchedApprovalCardProps {
  item: Batched;
  verbs: Verbs;
  busy: boolean;
  /** Whether the person looking may decide an action, and who may. */
  decide: (rule: DeciderRule) => Decidability;
}

export function BatchedApprovalCard({ item, verbs, busy, decide }: BatchedApprovalCardProps) {
  const decided = item.actions.filter((a) => a.draft !== undefined).length;
  const disabled = busy || item.status.phase === "sending";
  return (
    <CardFrame
      kind={item.kind}
      interruptId={item.id}
      subject={item.actions.map((action) => action.request.name).join(", ")}
      title={item.actions.length === 1 ? "1 tool call needs approval" : `${item.actions.length} tool calls need approval`}
      agent={item.value.agent}
      status={item.status}
      deadline={item.deadline}
    >
      {item.actions.length > 1 && (
        <p className="muted" data-testid="batch-progress">
          {decided} of {item.actions.length} decided — sent together when all are decided
        </p>
      )}
      {item.actions.map((action) => {
        const target = { interruptId: item.id, actionIndex: action.index };
        const decision = decide(action.decider);
        return (
          <article
            key={action.index}
            className="action"
            data-testid="action-card"
            data-index={action.index}
            data-tool={action.request.name}
            data-decided={action.draft ? action.draft.type : ""}
          >
            <ActionDetails request={action.request} requiredRole={action.decider.requiredRole} quorum={action.quorum} />
            {!decision.may ? (
              <DeciderNote decision={decision} />
            ) : action.draft ? (
              <div className="row">
                <span className="draft" data-testid="action-draft">
                  Decided: {describeDraft(action.draft)}
                </span>
                <button
                  type="button"
                  className="secondary"
                  disabled={disabled}
                  data-testid="action-undo"
                  onClick={() => verbs.undo(target)}
                >
                  Change
                </button>
              </div>
            ) : (
              <DecisionControls
                allowed={action.allowed}
                args={action.request.args}
                argsSchema={action.editArgsSchema}
                disabled={disabled}
                idPrefix={`rjsf_${item.id}_${action.index}`}
                onApprove={() => void verbs.approve(target)}
                onEdit={(args) => void verbs.edit(target, args)}
                onReject={(message) => void verbs.reject(target, message)}
                onRespond={(message) => void verbs.respond(target, message)}
              />
            )}
          </article>
        );
      })}
    </CardFrame>
  );
}
