/**
 * The thread's messages as a person reads them: AI text as Markdown, each tool call on one line
 * (open it for the args and the result), a subagent's work grouped under that subagent.
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { ApprovalReceipt } from "../../contracts/generated";
import { arrangeConversation, type ConversationEntry, type ToolCallView } from "../../present/conversation";
import { Markdown } from "../Markdown";
import { SubagentTask } from "./SubagentTask";
import { LoneToolResult, ToolCallLine } from "./ToolCallLine";

interface ConversationProps {
  messages: BaseMessage[];
  receipts?: readonly ApprovalReceipt[];
  /** Agents with a pending approval: their task shows "waiting for a decision". */
  waitingAgents?: ReadonlySet<string>;
  /** Tool calls a pending approval holds: their line says so. */
  waitingCalls?: ReadonlySet<string>;
}

const LABELS: Record<ConversationEntry["kind"], string> = { human: "Person", ai: "Agent", tool: "Tool", other: "" };

function Call({ call, receipts, waitingAgents, waitingCalls }: { call: ToolCallView } & Required<Omit<ConversationProps, "messages">>) {
  if (call.subagent !== null) {
    return (
      <SubagentTask
        call={{ ...call, subagent: call.subagent }}
        receipts={receipts}
        waiting={waitingAgents.has(call.subagent)}
      />
    );
  }
  return <ToolCallLine call={call} waiting={call.id !== null && waitingCalls.has(call.id)} />;
}

const NONE: ReadonlySet<string> = new Set();

export function Conversation({ messages, receipts = [], waitingAgents = NONE, waitingCalls = NONE }: ConversationProps) {
  if (messages.length === 0) return <p className="muted">No messages yet.</p>;
  const entries = arrangeConversation(messages);
  return (
    <ol className="conversation" aria-label="Conversation">
      {entries.map((entry) => {
        const role = entry.kind === "other" ? entry.role : entry.kind;
        return (
          <li key={entry.key} className={`message ${role}`} data-testid="message" data-role={role}>
            <span className="role-label">{LABELS[entry.kind] || role}</span>
            {entry.kind === "human" && <div className="text">{entry.text}</div>}
            {entry.kind === "other" && <div className="text">{entry.text}</div>}
            {entry.kind === "ai" && (
              <>
                {entry.text && <Markdown text={entry.text} />}
                {entry.toolCalls.map((call) => (
                  <Call
                    key={call.key}
                    call={call}
                    receipts={receipts}
                    waitingAgents={waitingAgents}
                    waitingCalls={waitingCalls}
                  />
                ))}
              </>
            )}
            {entry.kind === "tool" && <LoneToolResult result={entry.result} />}
          </li>
        );
      })}
    </ol>
  );
}
