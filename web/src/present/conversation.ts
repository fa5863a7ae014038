/**
 * The thread's messages arranged for reading: each AI turn with its tool calls, each call with
 * its result (matched by tool call id), and a subagent's `task` call as that subagent's work.
 * Pure; `Conversation` renders what this returns.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { isRecord } from "../interrupts/guards";

export interface ToolResultView {
  key: string;
  name: string;
  content: string;
  failed: boolean;
}

export interface ToolCallView {
  key: string;
  id: string | null;
  name: string;
  args: unknown;
  /** Set when this call is a Deep Agents `task`: the subagent that does the work. */
  subagent: string | null;
  result: ToolResultView | null;
}

export type ConversationEntry =
  | { kind: "human"; key: string; text: string }
  | { kind: "ai"; key: string; text: string; toolCalls: ToolCallView[] }
  | { kind: "tool"; key: string; result: ToolResultView }
  | { kind: "other"; key: string; role: string; text: string };

export function textOf(message: BaseMessage): string {
  try {
    return message.text;
  } catch {
    return typeof message.content === "string" ? message.content : JSON.stringify(message.content);
  }
}

function toolCallsOf(message: BaseMessage, key: string): ToolCallView[] {
  const calls: unknown = (message as { tool_calls?: unknown }).tool_calls;
  if (!Array.isArray(calls)) return [];
  return calls.filter(isRecord).map((call, index) => {
    const name = typeof call.name === "string" ? call.name : "(unnamed tool)";
    const args = call.args;
    const subagent =
      name === "task" && isRecord(args) && typeof args.subagent_type === "string" ? args.subagent_type : null;
    return {
      key: `${key}:${typeof call.id === "string" ? call.id : index}`,
      id: typeof call.id === "string" ? call.id : null,
      name,
      args,
      subagent,
      result: null,
    };
  });
}

function resultOf(message: BaseMessage, key: string): ToolResultView {
  const { name, status } = message as { name?: unknown; status?: unknown };
  return { key, name: typeof name === "string" ? name : "tool", content: textOf(message), failed: status === "error" };
}

export function arrangeConversation(messages: readonly BaseMessage[]): ConversationEntry[] {
  const entries: ConversationEntry[] = [];
  const callsById = new Map<string, ToolCallView>();
  messages.forEach((message, index) => {
    const key = message.id ?? `m${index}`;
    const role = message.type;
    if (role === "human") entries.push({ kind: "human", key, text: textOf(message) });
    else if (role === "ai") {
      const toolCalls = toolCallsOf(message, key);
      for (const call of toolCalls) if (call.id) callsById.set(call.id, call);
      entries.push({ kind: "ai", key, text: textOf(message), toolCalls });
    } else if (role === "tool") {
      const callId = (message as { tool_call_id?: unknown }).tool_call_id;
      const call = typeof callId === "string" ? callsById.get(callId) : undefined;
      const result = resultOf(message, key);
      if (call && !call.result) call.result = result;
      else entries.push({ kind: "tool", key, result });
    } else entries.push({ kind: "other", key, role, text: textOf(message) });
  });
  return entries;
}
