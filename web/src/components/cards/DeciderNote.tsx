/** Who decides a pending call, said where the buttons would be when the person looking may not press them. */
import type { Decidability } from "../../present/deciders";

export function DeciderNote({ decision }: { decision: Decidability }) {
  return (
    <p className="muted decider-note" data-testid="decider-note">
      {decision.who}. {decision.why}
    </p>
  );
}
