/** "due in 3 h 12 min", or "overdue by 5 min", with what happens then; escalations say so. */
import { useNow } from "../hooks/useNow";
import { countdown, expiryText, type Expiry } from "../present/deadline";
import { formatTime } from "./Json";

interface DeadlineBadgeProps {
  deadline: string | null | undefined;
  onExpiry?: Expiry | null;
  escalated?: boolean;
  /** The group an overdue approval goes to (named in "then it goes to someone in finance-leads"). */
  escalatesTo?: string | null;
  /** Inbox rows are short: no "then ..." sentence. */
  compact?: boolean;
}

export function DeadlineBadge({ deadline, onExpiry, escalated = false, escalatesTo, compact = false }: DeadlineBadgeProps) {
  const now = useNow();
  const view = countdown(deadline, now);
  if (!view && !escalated) return null;
  const then = compact ? null : expiryText(onExpiry, escalated, escalatesTo);
  return (
    <span className="deadline-line">
      {escalated && (
        <span className="badge escalated" data-testid="escalated">
          Escalated
        </span>
      )}
      {view && deadline && (
        <span
          className={`badge deadline${view.urgent ? " urgent" : ""}`}
          data-testid="deadline"
          data-overdue={view.overdue}
          title={`Deadline: ${formatTime(deadline)}`}
        >
          <time dateTime={deadline}>{view.text}</time>
        </span>
      )}
      {then && <span className="muted small"> {then}</span>}
    </span>
  );
}
