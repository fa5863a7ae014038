/** Read-only cards of answered interrupts: audit receipts, and decisions awaiting theirs. */
import type { ApprovalReceipt, ReceiptVerdict } from "../../contracts/generated";
import type { SentDecision } from "../../hooks/useApprovals";
import { isModelActor, stampOf } from "../../present/firstLine";
import { isPartial, quorumOfRecord } from "../../present/quorum";
import { ArgsTable } from "../ArgsTable";
import { ModelBadge } from "../FirstLineBadge";
import { formatTime, Json } from "../Json";
import { QuorumProgress } from "../QuorumProgress";

/** The server's verdict on a signed receipt: verified, or what is wrong with it. */
function VerifiedMark({ verdict }: { verdict?: ReceiptVerdict }) {
  if (!verdict) return null;
  return verdict.verified ? (
    <span className="verified" data-testid="receipt-verified" data-verified="true" title="Signature, bound fields and audit chain check out">
      ✓ verified
    </span>
  ) : (
    <span className="unverified" data-testid="receipt-verified" data-verified="false" title={verdict.problems.join("\n")}>
      ✗ not verified: {verdict.problems[0] ?? "unknown problem"}
    </span>
  );
}

export function ReceiptCard({ receipt, verdict }: { receipt: ApprovalReceipt; verdict?: ReceiptVerdict }) {
  // Only an edit changes a tool call's args; a form's answer differs from its context by design.
  const edited = receipt.decision === "edit";
  const quorum = quorumOfRecord(receipt);
  return (
    <section
      className={`card resolved decision-${receipt.decision}`}
      data-testid="receipt-card"
      data-interrupt-id={receipt.interrupt_id}
      data-tool-call-id={receipt.tool_call_id}
      data-tool={receipt.tool}
      data-decision={receipt.decision}
      data-partial={quorum ? isPartial(quorum) : undefined}
    >
      <header>
        <strong data-testid="receipt-decision">{receipt.decision}</strong>
        {receipt.tool && <span className="tool-name">{receipt.tool}</span>}
        {receipt.agent && <span className="agent">asked by {receipt.agent}</span>}
        <QuorumProgress quorum={quorum} />
        <VerifiedMark verdict={verdict} />
      </header>
      <p className="muted" data-testid="receipt-reviewer" data-by-model={isModelActor(receipt.reviewer) || undefined}>
        by {receipt.reviewer}
        {receipt.roles.length ? ` (${receipt.roles.join(", ")})` : ""} at {formatTime(receipt.decided_at)}{" "}
        {isModelActor(receipt.reviewer) && <ModelBadge stamp={stampOf(receipt)} testId="receipt-model" />}
      </p>
      {receipt.message && <p data-testid="receipt-message">“{receipt.message}”</p>}
      {receipt.final_args ? (
        <>
          {edited && receipt.requested_args && (
            <>
              <p className="muted">requested args</p>
              <ArgsTable args={receipt.requested_args} testId="receipt-requested-args" />
            </>
          )}
          <p className="muted">{edited ? "final args (edited)" : "final args"}</p>
          <ArgsTable args={receipt.final_args} testId="receipt-final-args" />
        </>
      ) : (
        receipt.requested_args && <ArgsTable args={receipt.requested_args} testId="receipt-requested-args" />
      )}
    </section>
  );
}

export function SentCard({ sent }: { sent: SentDecision }) {
  return (
    <section className="card resolved" data-testid="sent-card" data-interrupt-id={sent.interruptId}>
      <header>
        <strong>Decision sent</strong>
        <span className="muted">at {formatTime(sent.sentAt)}, waiting for the audit record</span>
      </header>
      <Json value={sent.answer} />
    </section>
  );
}
