/** A subagent's work in one place: the task it was given, the decisions made on its calls, its report. */
import type { ApprovalReceipt } from "../../contracts/generated";
import { isRecord } from "../../interrupts/guards";
import type { ToolCallView } from "../../present/conversation";
import { Markdown } from "../Markdown";
import { ToolResult } from "./ToolCallLine";

interface SubagentTaskProps {
  call: ToolCallView & { subagent: string };
  receipts: readonly ApprovalReceipt[];
  waiting: boolean;
}

export function SubagentTask({ call, receipts, waiting }: SubagentTaskProps) {
  const description = isRecord(call.args) && typeof call.args.description === "string" ? call.args.description : "";
  const status = call.result ? "done" : waiting ? "waiting" : "working";
  const statusText = { done: "reported back", waiting: "waiting for a decision", working: "working…" }[status];
  const decisions = receipts.filter((r) => r.agent === call.subagent);
  return (
    <section className="subagent" data-testid="subagent-task" data-subagent={call.subagent} data-status={status}>
      <header className="row">
        <span className="badge">subagent</span>
        <strong data-testid="subagent-name">{call.subagent}</strong>
        <span className="muted">{statusText}</span>
      </header>
      {description && (
        <div className="subagent-task-text">
          <Markdown text={description} />
        </div>
      )}
      {decisions.length > 0 && (
        <ul className="subagent-decisions" aria-label={`Decisions on ${call.subagent}'s calls`}>
          {decisions.map((r) => (
            <li key={`${r.interrupt_id}|${r.tool_call_id}`} data-testid="subagent-decision">
              {r.tool}: <strong>{r.decision}</strong> by {r.reviewer}
            </li>
          ))}
        </ul>
      )}
      {call.result && (
        <details className="tool-call" open>
          <summary>Report</summary>
          {call.result.failed ? <ToolResult result={call.result} /> : (
            <div data-testid="tool-result" data-tool={call.result.name} className="tool-result">
              <Markdown text={call.result.content} />
            </div>
          )}
        </details>
      )}
    </section>
  );
}
