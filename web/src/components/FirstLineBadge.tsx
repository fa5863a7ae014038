/** Marks a decision a first-line reviewer (a model) took, apart from people's; and its note on a referred card. */
import type { FirstLineNote, FirstLineStamp } from "../contracts/generated";
import { modelWords } from "../present/firstLine";

export function ModelBadge({ stamp, testId }: { stamp: FirstLineStamp | null; testId: string }) {
  return (
    <span className="badge model" data-testid={testId} title="A first-line reviewer decided this, not a person">
      {modelWords(stamp)}
    </span>
  );
}

export function FirstLineNoteLine({ note }: { note: FirstLineNote }) {
  return (
    <p className="first-line-note" data-testid="first-line-note" data-cause={note.cause}>
      First-line reviewer <strong>{note.reviewer}</strong> <span className="muted">({note.model}, a model)</span> left
      this to you: {note.reason}
    </p>
  );
}
