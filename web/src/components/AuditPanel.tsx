/** A thread's audit trail: who decided what and when, with what args, and every refused attempt. */
import type { AuditRecord } from "../contracts/generated";
import { isModelActor, stampOf } from "../present/firstLine";
import { describeQuorum, quorumOfRecord } from "../present/quorum";
import { summarizeArgs } from "../present/summaries";
import { ArgsTable } from "./ArgsTable";
import { ModelBadge } from "./FirstLineBadge";
import { formatTime } from "./Json";

function argsOf(record: AuditRecord) {
  return record.final_args ?? (Object.keys(record.requested_args).length ? record.requested_args : null);
}

function AuditEntry({ record }: { record: AuditRecord }) {
  const refused = record.outcome !== "accepted";
  const args = argsOf(record);
  const quorum = quorumOfRecord(record);
  const who = record.reviewer;
  const as = isModelActor(who) ? (
    <ModelBadge stamp={stampOf(record)} testId="audit-model" />
  ) : record.roles.length ? (
    <span className="muted"> · as {record.roles.join(", ")}</span>
  ) : null;
  return (
    <li
      className={`audit-entry outcome-${record.outcome}`}
      data-testid="audit-record"
      data-outcome={record.outcome}
      data-decision={record.decision}
      data-tool={record.tool}
      data-interrupt-id={record.interrupt_id}
    >
      <p className="audit-line">
        <time dateTime={record.decided_at} className="muted">
          {formatTime(record.decided_at)}
        </time>{" "}
        {refused ? (
          <>
            <strong>{who}</strong> tried to answer <span className="tool-name">{record.tool}</span>:{" "}
            <span className="error-text" data-testid="audit-refusal">
              {record.outcome} — {record.refusal ?? "refused"}
            </span>
            {as}
          </>
        ) : (
          <>
            <strong>{who}</strong> <span data-testid="audit-decision">{record.decision}</span>{" "}
            <span className="tool-name">{record.tool}</span>
            {record.agent && <span className="muted"> (asked by {record.agent})</span>}
            {as}
          </>
        )}
      </p>
      {quorum && <p className="muted small">{describeQuorum(quorum)}</p>}
      {record.message && !refused && <p className="audit-message">“{record.message}”</p>}
      {args && (
        <details>
          <summary>
            {record.final_args ? (record.decision === "edit" ? "edited args" : "args") : "requested args"}:{" "}
            <span className="muted">{summarizeArgs(args, 70)}</span>
          </summary>
          <ArgsTable args={args} testId="audit-args" />
        </details>
      )}
    </li>
  );
}

export function AuditPanel({ records, available }: { records: readonly AuditRecord[]; available: boolean }) {
  return (
    <section className="audit-panel" data-testid="audit-panel" aria-labelledby="audit-heading">
      <h3 id="audit-heading">Audit trail</h3>
      {!available ? (
        <p className="muted">The audit trail opens once the thread has one you may read.</p>
      ) : records.length === 0 ? (
        <p className="muted" data-testid="audit-empty">
          No decisions yet.
        </p>
      ) : (
        <ol className="audit-list">
          {records.map((record, index) => (
            <AuditEntry key={`${record.decided_at}|${record.interrupt_id}|${record.tool_call_id}|${index}`} record={record} />
          ))}
        </ol>
      )}
    </section>
  );
}
