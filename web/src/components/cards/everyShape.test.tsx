/**
 * Every interrupt kind the contract publishes gets a card of its own: buttons for whoever is in the
 * group that decides it, the words "Someone in … decides this" and no buttons for anyone else.
 * The kinds and their example values come from the published schema (`contracts/schema.ts`), so a
 * kind added in Python fails here, naming it, until a card shows it. The same with real runs through
 * the real server, in Chromium: `tests/web/test_shapes_matrix.py`.
 */
import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { definition, SHAPES, shapeOf } from "../../contracts/schema";
import type { Approvals } from "../../hooks/useApprovals";
import { IDLE, toPendingApproval } from "../../hooks/pendingView";
import { classifyInterrupt, type ClassifiedInterrupt } from "../../interrupts/guards";
import type { Viewer } from "../../present/deciders";
import { formSchema } from "../../test/fixtures";
import { InterruptCard } from "./InterruptCard";

afterEach(cleanup);

const OWNER = "olga";

function examples(): [string, ClassifiedInterrupt][] {
  return [...SHAPES.keys()].flatMap((kind) =>
    (definition(shapeOf(kind)).examples as unknown[]).map((value, index) => {
      const item = classifyInterrupt({ id: `${kind}-${index}`, value });
      if (!item) throw new Error(`${kind}: its example has no id`);
      return [kind, item] as [string, ClassifiedInterrupt];
    }),
  );
}

function show(item: ClassifiedInterrupt, viewer: Viewer) {
  const schema = item.kind === "form" ? formSchema : null;
  const pending = toPendingApproval(item, { status: IDLE, schema, schemaKnown: true, drafts: undefined });
  const verbs = { approve: vi.fn(), edit: vi.fn(), reject: vi.fn(), respond: vi.fn(), submit: vi.fn(), undo: vi.fn() };
  render(<InterruptCard item={pending} approvals={verbs as unknown as Approvals} busy={false} viewer={viewer} owner={OWNER} />);
  return pending;
}

/** Every decider the pending item names (each action of a batch). */
function decidersOf(item: ClassifiedInterrupt): string[] {
  const pending = toPendingApproval(item, { status: IDLE, schema: null, schemaKnown: true, drafts: undefined });
  const rules = pending.kind === "batched" ? pending.actions.map((a) => a.decider) : [pending.decider];
  return rules.flatMap((rule) => (rule ? [rule.requiredRole] : []));
}

describe("a card for every published kind", () => {
  it.each(examples())("%s: whoever is in its deciding group gets its buttons", (kind, item) => {
    show(item, { identity: OWNER, role: "reviewer", decides_as: decidersOf(item) });
    const card = screen.getByTestId("interrupt-card");
    expect(card.getAttribute("data-kind"), `no card shows a ${kind}`).toBe(kind);
    expect(screen.queryByTestId("decider-note"), `a ${kind}'s decider is offered no buttons`).toBeNull();
  });

  it.each(examples())("%s: anyone else reads it, with who decides it, and no buttons", (kind, item) => {
    show(item, { identity: "zed", role: "requester", decides_as: ["requester"] });
    expect(screen.getByTestId("interrupt-card").getAttribute("data-kind")).toBe(kind);
    const notes = screen.getAllByTestId("decider-note").map((n) => n.textContent ?? "");
    expect(notes.every((note) => / (decides|answers) this/.test(note)), notes.join(" | ")).toBe(true);
    for (const button of ["decision-approve", "decision-reject", "decision-respond", "approval-approve", "form-submit"]) {
      expect(screen.queryByTestId(button), `${kind}: ${button} offered to someone who may not press it`).toBeNull();
    }
  });
});
