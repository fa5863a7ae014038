/** The frame every pending-interrupt card shares: who asks, status, the server's refusal. */
import type { ReactNode } from "react";
import type { CardStatus } from "../../hooks/useApprovals";
import type { DeadlineInfo } from "../../hooks/pendingView";
import { DeadlineBadge } from "../DeadlineBadge";

interface CardFrameProps {
  kind: string;
  interruptId: string;
  /** What it asks about (the tool, the form, the action): `data-subject`, as an action card's `data-tool`. */
  subject: string;
  title: string;
  agent?: string;
  status: CardStatus;
  deadline?: DeadlineInfo;
  children: ReactNode;
}

export function CardFrame({ kind, interruptId, subject, title, agent, status, deadline, children }: CardFrameProps) {
  return (
    <section
      className={`card pending status-${status.phase}`}
      data-testid="interrupt-card"
      data-kind={kind}
      data-interrupt-id={interruptId}
      data-subject={subject}
      data-status={status.phase}
      aria-busy={status.phase === "sending"}
      aria-label={title}
    >
      <header>
        <h4 className="card-title">{title}</h4>
        {agent && (
          <span className="agent" data-testid="card-agent">
            asked by {agent}
          </span>
        )}
        {deadline && (
          <DeadlineBadge
            deadline={deadline.deadline}
            onExpiry={deadline.onExpiry}
            escalated={deadline.escalated}
            escalatesTo={deadline.escalatesTo}
          />
        )}
      </header>
      {status.phase === "sending" && (
        <p className="muted" data-testid="card-sending">
          Sending decision…
        </p>
      )}
      {status.phase === "error" && (
        <p className="error" role="alert" data-testid="card-error">
          {status.message}
        </p>
      )}
      {children}
    </section>
  );
}
