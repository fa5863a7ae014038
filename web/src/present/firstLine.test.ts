import { describe, expect, it } from "vitest";
import { isModelActor, modelWords, noteOf, stampOf } from "./firstLine";

describe("a first-line reviewer in words", () => {
  it("tells a model's name from a person's", () => {
    expect(isModelActor("model:support-triage")).toBe(true);
    expect(isModelActor("reviewer1")).toBe(false);
    expect(isModelActor(undefined)).toBe(false);
  });

  it("reads a receipt's stamp and an action's note, and nothing else", () => {
    const stamp = { model: "scripted:support-triage", policy_revision: "ab", stood_for: "reviewer", latency_ms: 0.1 };
    expect(stampOf({ first_line: stamp })).toEqual(stamp);
    expect(stampOf({ first_line: "scripted" })).toBeNull();
    expect(stampOf({})).toBeNull();
    const note = { reviewer: "model:t", model: "scripted:t", reason: "unsure", cause: "model" };
    expect(noteOf({ first_line: note })).toEqual(note);
    expect(noteOf({ first_line: { reviewer: "model:t" } })).toBeNull();
    expect(modelWords(stamp)).toBe("a model (scripted:support-triage)");
    expect(modelWords(null)).toBe("a model");
  });
});
