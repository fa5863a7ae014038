/** The frame every pending-interrupt card shares: who asks, status, the server's refusal. */
import type { ReactNode } from "react";
import type { CardStatus } from "../../hooks/useApprovals";

interface CardFrameProps {
  kind: string;
  interruptId: string;
  title: string;
  agent?: string;
  status: CardStatus;
  children: ReactNode;
}

export function CardFrame({ kind, interruptId, title, agent, status, children }: CardFrameProps) {
  return (
    <section
      className={`card pending status-${status.phase}`}
      data-testid="interrupt-card"
      data-kind={kind}
      data-interrupt-id={interruptId}
      data-status={status.phase}
      aria-busy={status.phase === "sending"}
    >
      <header>
        <strong>{title}</strong>
        {agent && (
          <span className="agent" data-testid="card-agent">
            asked by {agent}
          </span>
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
