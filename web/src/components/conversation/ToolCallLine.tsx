/** One tool call in one line (its name, a summary, what it returned); opens to the args and the result. */
import type { ToolCallView, ToolResultView } from "../../present/conversation";
import { prettyContent, summarizeResult, summarizeToolCall } from "../../present/summaries";
import { ArgsTable } from "../ArgsTable";

export function ToolResult({ result }: { result: ToolResultView }) {
  return (
    <div className="tool-result" data-testid="tool-result" data-tool={result.name} data-failed={result.failed}>
      <p className="label">{result.failed ? "Failed" : "Returned"}</p>
      <pre className="json">{prettyContent(result.content)}</pre>
    </div>
  );
}

export function ToolCallLine({ call, waiting = false }: { call: ToolCallView; waiting?: boolean }) {
  const summary = summarizeToolCall(call.name, call.args);
  return (
    <details className="tool-call" data-testid="tool-call" data-tool={call.name} data-waiting={waiting}>
      <summary>
        <span className="tool-name">{call.name}</span>
        {summary && <span className="muted"> {summary}</span>}
        {call.result ? (
          <span className={call.result.failed ? "error-text" : "muted"} data-testid="tool-call-outcome">
            {" "}
            → {summarizeResult(call.result.content, 60) || "done"}
          </span>
        ) : waiting ? (
          <span className="waiting-text"> · waiting for a decision</span>
        ) : (
          <span className="muted"> · no result yet</span>
        )}
      </summary>
      <ArgsTable args={call.args} testId="tool-call-args" />
      {call.result && <ToolResult result={call.result} />}
    </details>
  );
}

/** A tool result whose call is not in the conversation (e.g. it came before the first message shown). */
export function LoneToolResult({ result }: { result: ToolResultView }) {
  return (
    <details className="tool-call">
      <summary>
        <span className="tool-name">{result.name}</span>
        <span className="muted"> → {summarizeResult(result.content, 80)}</span>
      </summary>
      <ToolResult result={result} />
    </details>
  );
}
