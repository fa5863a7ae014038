/**
 * Short, readable forms of tool calls and their results: a one-line summary for the collapsed
 * view, field names in words for tables. Pure functions over plain JSON.
 */
import { isRecord } from "../interrupts/guards";

const ACRONYMS = new Set(["id", "sql", "url", "api", "csv"]);

/** `due_date` → "Due date", `invoice_id` → "Invoice ID", `tool_call_id` → "Tool call ID". */
export function humanizeKey(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .split(/[_\s-]+/)
    .filter(Boolean)
    .map((word) => (ACRONYMS.has(word.toLowerCase()) ? word.toUpperCase() : word.toLowerCase()));
  const text = words.join(" ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** A value in words: booleans as yes/no, lists joined, objects as compact JSON. */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return "—";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  if (Array.isArray(value) && value.every((v) => !isRecord(v) && !Array.isArray(v))) {
    return value.map(formatValue).join(", ");
  }
  return JSON.stringify(value);
}

export function truncate(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1).trimEnd()}…` : flat;
}

/** `{invoice_id: "INV-1", amount: 250}` → "invoice_id INV-1, amount 250" (truncated to `max`). */
export function summarizeArgs(args: unknown, max = 80): string {
  if (!isRecord(args)) return args === undefined ? "" : truncate(formatValue(args), max);
  const parts = Object.entries(args).map(([key, value]) => `${key} ${formatValue(value)}`);
  return truncate(parts.join(", "), max);
}

/** A tool call in one line: the task of a subagent, or the tool's args. */
export function summarizeToolCall(name: string, args: unknown, max = 80): string {
  if (name === "task" && isRecord(args) && typeof args.description === "string") {
    const who = typeof args.subagent_type === "string" ? `${args.subagent_type}: ` : "";
    return truncate(`${who}${args.description}`, max);
  }
  return summarizeArgs(args, max);
}

/** A tool's result in one line: a JSON object's fields, or the text's first line. */
export function summarizeResult(content: string, max = 100): string {
  const text = content.trim();
  if (text.startsWith("{") || text.startsWith("[")) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (isRecord(parsed)) return summarizeArgs(parsed, max);
      if (Array.isArray(parsed)) return `${parsed.length} item${parsed.length === 1 ? "" : "s"}`;
    } catch {
      // not JSON after all: the text is the summary
    }
  }
  return truncate(text.split("\n").find((line) => line.trim()) ?? "", max);
}

/** Pretty JSON when `content` is JSON, else the text unchanged. */
export function prettyContent(content: string): string {
  const text = content.trim();
  if (!(text.startsWith("{") || text.startsWith("["))) return content;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return content;
  }
}
