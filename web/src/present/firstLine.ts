/**
 * A first-line reviewer (a model a policy hands routine calls to) in words: who it is, what it
 * ran, what it said. Its decisions are signed as `model:<name>`, never a person's; the server's
 * records carry its stamp (`first_line`), a referred call's card its note.
 */
import type { FirstLineNote, FirstLineStamp } from "../contracts/generated";

/** Receipts and trail records name a first-line reviewer so (`hitl.policy.first_line.ACTOR_PREFIX`). */
export const MODEL_PREFIX = "model:";

export function isModelActor(who: unknown): boolean {
  return typeof who === "string" && who.startsWith(MODEL_PREFIX);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The stamp a first-line receipt or trail record carries (its model, rules, latency), if any. */
export function stampOf(record: { first_line?: unknown }): FirstLineStamp | null {
  const stamp = record.first_line;
  return isObject(stamp) && typeof stamp.model === "string" ? (stamp as unknown as FirstLineStamp) : null;
}

/** What a first-line reviewer said of a call it left to people, if the action carries it. */
export function noteOf(request: { first_line?: unknown }): FirstLineNote | null {
  const note = request.first_line;
  return isObject(note) && typeof note.reviewer === "string" && typeof note.reason === "string"
    ? (note as unknown as FirstLineNote)
    : null;
}

/** "a model (scripted:support-triage)": how the web app says a model decided. */
export function modelWords(stamp: FirstLineStamp | null): string {
  return stamp ? `a model (${stamp.model})` : "a model";
}
