/** What a reviewer reads before deciding on one tool call: the review text, who asks, the args (and what a first-line reviewer said). */
import type { ActionRequest } from "../../contracts/generated";
import type { Quorum } from "../../present/quorum";
import { noteOf } from "../../present/firstLine";
import { humanizeKey } from "../../present/summaries";
import { ArgsTable } from "../ArgsTable";
import { FirstLineNoteLine } from "../FirstLineBadge";
import { QuorumProgress } from "../QuorumProgress";

interface ActionDetailsProps {
  request: Pick<ActionRequest, "name" | "args" | "description" | "agent" | "first_line">;
  requiredRole: string | null;
  quorum: Quorum | null;
}

/** The review text without the first-line line the gate appends for text-only clients (shown as a note here). */
function reviewText(request: ActionDetailsProps["request"]): string {
  const text = request.description || humanizeKey(request.name);
  const note = noteOf(request);
  const line = note ? `\n\nFirst-line reviewer ${note.reviewer} left this to you: ${note.reason}` : "";
  return line && text.endsWith(line) ? text.slice(0, -line.length) : text;
}

export function ActionDetails({ request, requiredRole, quorum }: ActionDetailsProps) {
  const note = noteOf(request);
  return (
    <>
      <p className="review-text" data-testid="action-description">
        {reviewText(request)}
      </p>
      {note && <FirstLineNoteLine note={note} />}
      <p className="action-meta">
        <span className="tool-name" data-testid="action-tool">
          {request.name}
        </span>
        <span className="agent">by {request.agent}</span>
        {requiredRole && <span className="role">needs {requiredRole}</span>}
        <QuorumProgress quorum={quorum} />
      </p>
      <ArgsTable args={request.args} />
    </>
  );
}
