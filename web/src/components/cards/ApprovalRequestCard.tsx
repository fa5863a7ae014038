/** A sign-off a tool asks for (`approval_request`): approve or deny, with a reason. Keys: `a` approves, `r` goes to the reason. */
import { useRef, useState } from "react";
import { DECISION_KEYS_ATTR, useDecisionKeys } from "../../hooks/useDecisionKeys";
import type { Approvals, PendingApproval } from "../../hooks/useApprovals";
import type { Decidability } from "../../present/deciders";
import { CardFrame } from "./CardFrame";
import { DeciderNote } from "./DeciderNote";

type ApprovalItem = Extract<PendingApproval, { kind: "approval_request" }>;

interface ApprovalRequestCardProps {
  item: ApprovalItem;
  submit: Approvals["submit"];
  busy: boolean;
  /** Whether the person looking may sign off, and who may. */
  decision: Decidability;
}

export function ApprovalRequestCard(props: ApprovalRequestCardProps) {
  const { item, submit, busy, decision } = props;
  const [reason, setReason] = useState("");
  const disabled = busy || item.status.phase === "sending";
  const answer = (approved: boolean) => void submit(item.id, { approved, reason: reason.trim() });
  const own = useRef<HTMLDivElement>(null);
  const reasonBox = useRef<HTMLTextAreaElement>(null);
  useDecisionKeys(own, { approve: () => answer(true), reject: () => reasonBox.current?.focus() }, !disabled && decision.may);
  return (
    <CardFrame
      kind={item.kind}
      interruptId={item.id}
      subject={item.value.action}
      title={item.value.action}
      agent={item.value.agent}
      status={item.status}
      deadline={item.deadline}
    >
      <p className="review-text">{item.value.message}</p>
      {!decision.may ? (
        <DeciderNote decision={decision} />
      ) : (
        <div ref={own} {...{ [DECISION_KEYS_ATTR]: "" }}>
          <textarea
            ref={reasonBox}
            aria-label="Reason"
            data-testid="approval-reason"
            placeholder="Reason"
            value={reason}
            disabled={disabled}
            onChange={(event) => setReason(event.target.value)}
          />
          <div className="row decisions">
            <button type="button" className="primary" disabled={disabled} data-testid="approval-approve" onClick={() => answer(true)}>
              Approve
            </button>
            <button type="button" className="danger" disabled={disabled} data-testid="approval-deny" onClick={() => answer(false)}>
              Deny
            </button>
          </div>
        </div>
      )}
    </CardFrame>
  );
}
