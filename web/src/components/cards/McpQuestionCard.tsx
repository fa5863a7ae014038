/**
 * An MCP server's question in the middle of a tool call (`mcp_elicitation`): its words, the call it is
 * about, and a form from the server's `requested_schema` (or, in url mode, its link to open), answered
 * accept, decline or cancel. Every word the server sent is shown as text, never as markup or HTML.
 */
import type { Approvals, PendingApproval } from "../../hooks/useApprovals";
import type { Decidability } from "../../present/deciders";
import type { JsonSchema } from "../../interrupts/responseSchema";
import { ArgsTable } from "../ArgsTable";
import { SchemaForm } from "../SchemaForm";
import { CardFrame } from "./CardFrame";
import { DeciderNote } from "./DeciderNote";

type QuestionItem = Extract<PendingApproval, { kind: "mcp_elicitation" }>;

interface McpQuestionCardProps {
  item: QuestionItem;
  submit: Approvals["submit"];
  busy: boolean;
  /** Whether the person looking may answer, and who may. */
  decision: Decidability;
}

/** What the answer's content must be: the server's fields, and nothing else. */
function contentSchema(requested: Record<string, unknown>): JsonSchema {
  return { ...requested, type: "object", additionalProperties: false } as JsonSchema;
}

export function McpQuestionCard({ item, submit, busy, decision }: McpQuestionCardProps) {
  const { value } = item;
  const disabled = busy || item.status.phase === "sending";
  const refuse = (action: "decline" | "cancel") => void submit(item.id, { action });
  return (
    <CardFrame
      kind={item.kind}
      interruptId={item.id}
      subject={`${value.mcp.server}.${value.mcp.tool}`}
      title={`${value.mcp.server}.${value.mcp.tool} asks`}
      agent={value.agent}
      status={item.status}
      deadline={item.deadline}
    >
      <p className="review-text" data-testid="mcp-question">
        {value.message}
      </p>
      <ArgsTable args={value.args} testId="mcp-call-args" />
      {!decision.may ? (
        <DeciderNote decision={decision} />
      ) : (
        <>
          {value.mode === "url" && value.url ? (
            <>
              <p>
                Open this link, then say whether you did:{" "}
                <a href={value.url} target="_blank" rel="noopener noreferrer nofollow" data-testid="mcp-link">
                  {value.url}
                </a>
              </p>
              <div className="row decisions">
                <button
                  type="button"
                  className="primary"
                  disabled={disabled}
                  data-testid="mcp-accept"
                  onClick={() => void submit(item.id, { action: "accept" })}
                >
                  Done
                </button>
              </div>
            </>
          ) : (
            <SchemaForm
              schema={contentSchema(value.requested_schema ?? {})}
              disabled={disabled}
              idPrefix={`rjsf_${item.id}`}
              submitLabel="Answer"
              submitTestId="mcp-accept"
              onSubmit={(content) => void submit(item.id, { action: "accept", content })}
            />
          )}
          <div className="row decisions">
            <button type="button" disabled={disabled} data-testid="mcp-decline" onClick={() => refuse("decline")}>
              Decline
            </button>
            <button type="button" className="danger" disabled={disabled} data-testid="mcp-cancel" onClick={() => refuse("cancel")}>
              Cancel the call
            </button>
          </div>
        </>
      )}
    </CardFrame>
  );
}
