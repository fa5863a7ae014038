/** What a reviewer reads before deciding on one tool call: the review text, who asks, the args. */
import type { ActionRequest } from "../../contracts/generated";
import type { Quorum } from "../../present/quorum";
import { humanizeKey } from "../../present/summaries";
import { ArgsTable } from "../ArgsTable";
import { QuorumProgress } from "../QuorumProgress";

interface ActionDetailsProps {
  request: Pick<ActionRequest, "name" | "args" | "description" | "agent">;
  requiredRole: string | null;
  quorum: Quorum | null;
}

export function ActionDetails({ request, requiredRole, quorum }: ActionDetailsProps) {
  return (
    <>
      <p className="review-text" data-testid="action-description">
        {request.description || humanizeKey(request.name)}
      </p>
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
