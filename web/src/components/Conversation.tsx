/** The thread's messages as they stream, with each AI tool call's name and args. */
import type { BaseMessage } from "@langchain/core/messages";
import { isRecord } from "../interrupts/guards";
import { Json } from "./Json";

interface ToolCallView {
  id?: string;
  name: string;
  args: unknown;
}

function toolCallsOf(message: BaseMessage): ToolCallView[] {
  const calls: unknown = (message as { tool_calls?: unknown }).tool_calls;
  if (!Array.isArray(calls)) return [];
  return calls.filter(isRecord).map((call) => ({
    id: typeof call.id === "string" ? call.id : undefined,
    name: typeof call.name === "string" ? call.name : "(unnamed tool)",
    args: call.args,
  }));
}

function textOf(message: BaseMessage): string {
  try {
    return message.text;
  } catch {
    return typeof message.content === "string" ? message.content : JSON.stringify(message.content);
  }
}

export function Conversation({ messages }: { messages: BaseMessage[] }) {
  if (messages.length === 0) return <p className="muted">No messages yet.</p>;
  return (
    <ol className="conversation">
      {messages.map((message, index) => {
        const role = message.type;
        const toolName = role === "tool" ? (message as { name?: unknown }).name : undefined;
        return (
          <li key={message.id ?? index} className={`message ${role}`} data-testid="message" data-role={role}>
            <span className="role-label">{typeof toolName === "string" ? `tool · ${toolName}` : role}</span>
            {textOf(message) && <div className="text">{textOf(message)}</div>}
            {toolCallsOf(message).map((call, i) => (
              <div key={call.id ?? i} className="tool-call" data-testid="tool-call" data-tool={call.name}>
                <code>{call.name}</code>
                <Json value={call.args} />
              </div>
            ))}
          </li>
        );
      })}
    </ol>
  );
}
