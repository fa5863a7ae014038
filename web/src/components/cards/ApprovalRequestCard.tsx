/** A sign-off a tool asks for (`approval_request`): approve or deny, with a reason. Keys: `a` approves, `r` goes to the reason. */
import { useRef, useState } from "react";
import { DECISION_KEYS_ATTR, useDecisionKeys } from "../../hooks/useDecisionKeys";
import type { Approvals, PendingApproval } from "../../hooks/useApprovals";
import { CardFrame } from "./CardFrame";

type ApprovalItem = Extract<PendingApproval, { kind: "approval_request" }>;

export function ApprovalRequestCard(props: { item: ApprovalItem; submit: Approvals["submit"]; busy: boolean }) {
  const { item, submit, busy } = props;
  const [reason, setReason] = useState("");
  const disabled = busy || item.status.phase === "sending";
  const answer = (approved: boolean) => void submit(item.id, { approved, reason: reason.trim() });
  const own = useRef<HTMLDivElement>(null);
  const reasonBox = useRef<HTMLTextAreaElement>(null);
  useDecisionKeys(own, { approve: () => answer(true), reject: () => reasonBox.current?.focus() }, !disabled);
  return (
    <CardFrame
      kind={item.kind}
      interruptId={item.id}
      title={item.value.action}
      agent={item.value.agent}
      status={item.status}
      deadline={item.deadline}
    >
      <p className="review-text">{item.value.message}</p>
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
    </CardFrame>
  );
}
