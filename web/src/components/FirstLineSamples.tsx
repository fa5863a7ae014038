/** The inbox's after-the-fact checks: a sample of what the first-line reviewer (a model) approved, for a person. */
import { useState } from "react";
import type { FirstLineReview } from "../contracts/generated";
import { type SampleWord, useFirstLineSamples } from "../hooks/useFirstLineSamples";
import { useMe } from "../hooks/useMe";
import { threadHref } from "../router";
import { ArgsTable } from "./ArgsTable";
import { formatTime } from "./Json";

function Sample({ sample, onCheck }: { sample: FirstLineReview; onCheck: (word: SampleWord, note: string) => void }) {
  const [note, setNote] = useState("");
  return (
    <li className="card" data-testid="first-line-sample" data-tool-call-id={sample.tool_call_id} data-tool={sample.tool}>
      <p>
        <strong>{sample.reviewer}</strong> <span className="muted">({sample.model}, a model)</span> approved{" "}
        <span className="tool-name">{sample.tool}</span> at {formatTime(sample.decided_at)}:{" "}
        <span data-testid="first-line-sample-reason">{sample.reason}</span> ·{" "}
        <a href={threadHref(sample.thread_id, null)}>open thread</a>
      </p>
      <ArgsTable args={sample.args} />
      <div className="row">
        <input
          aria-label={`Note on ${sample.tool} ${sample.tool_call_id}`}
          placeholder="note (optional)"
          value={note}
          onChange={(event) => setNote(event.target.value)}
        />
        <button type="button" onClick={() => onCheck("fine", note)} data-testid="first-line-fine">
          Fine
        </button>
        <button type="button" className="danger" onClick={() => onCheck("should_not_have", note)} data-testid="first-line-overturn">
          Should not have
        </button>
      </div>
    </li>
  );
}

export function FirstLineSamples({ token }: { token: string }) {
  const me = useMe(token);
  const samples = useFirstLineSamples(token, (me?.decides_as.length ?? 0) > 0);
  if (!samples.allowed || (samples.items.length === 0 && !samples.error)) return null;
  return (
    <section className="first-line-samples" data-testid="first-line-samples" aria-labelledby="first-line-heading">
      <h3 id="first-line-heading">Decided by the first-line reviewer: check these</h3>
      <p className="muted small">A sample of what a model approved without a person. Say whether it should have.</p>
      {samples.error && (
        <p className="error" role="alert" data-testid="first-line-error">
          {samples.error}
        </p>
      )}
      <ul>
        {samples.items.map((sample) => (
          <Sample
            key={`${sample.thread_id}|${sample.tool_call_id}`}
            sample={sample}
            onCheck={(word, note) => void samples.check(sample, word, note)}
          />
        ))}
      </ul>
    </section>
  );
}
