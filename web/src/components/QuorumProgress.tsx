/** "1 of 2 approvals · approved by sam", when a call needs more than one person's approval. */
import { describeQuorum, isPartial, type Quorum } from "../present/quorum";

export function QuorumProgress({ quorum }: { quorum: Quorum | null }) {
  if (!quorum) return null;
  return (
    <span className={`badge quorum${isPartial(quorum) ? " partial" : ""}`} data-testid="quorum">
      {describeQuorum(quorum)}
    </span>
  );
}
