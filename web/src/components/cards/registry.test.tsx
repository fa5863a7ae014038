import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { FormRequest } from "../../contracts/generated";
import type { Approvals, PendingApproval } from "../../hooks/useApprovals";
import { isFormRequest, isRecord } from "../../interrupts/guards";
import { OWNER_ANSWERS } from "../../present/deciders";
import { form, formSchema } from "../../test/fixtures";
import { InterruptCard } from "./InterruptCard";
import { registerFormCard, registeredForms, type FormCardProps } from "./registry";

/** A form of a project's own: its context names an invoice. */
interface TermsForm extends FormRequest {
  context: { invoice: string; amount: number };
}

function isTermsForm(value: unknown): value is TermsForm {
  return isFormRequest(value) && value.form === "payment-terms" && isRecord(value.context) && typeof value.context.invoice === "string";
}

function TermsCard({ item, value, submit }: FormCardProps<TermsForm>) {
  return (
    <div data-testid="terms-card">
      {value.context.invoice}
      <button type="button" onClick={() => void submit(item.id, { decision: "approve", terms: "net-30", reminder: false })}>
        ok
      </button>
    </div>
  );
}

const unregister: (() => void)[] = [];
afterEach(() => {
  cleanup();
  unregister.splice(0).forEach((undo) => undo());
});

function show(value: FormRequest) {
  const submit = vi.fn(async () => {});
  const item: PendingApproval = {
    kind: "form",
    id: "form-1",
    value,
    responseSchema: formSchema,
    status: { phase: "idle" },
    schemaLoading: false,
    deadline: { deadline: null, onExpiry: null, escalated: false },
    decider: OWNER_ANSWERS,
  };
  render(
    <InterruptCard
      item={item}
      approvals={{ submit } as unknown as Approvals}
      busy={false}
      viewer={{ identity: "ana", role: "requester" }}
      owner="ana"
    />,
  );
  return submit;
}

describe("form cards registered by form name", () => {
  it("a form with no registered card gets the generic card: its context and a form from its response_schema", async () => {
    expect(registeredForms()).not.toContain("payment-terms");
    show(form);
    expect(screen.queryByTestId("terms-card")).toBeNull();
    expect(screen.getByTestId("interrupt-card").dataset.kind).toBe("form");
    expect(screen.getByTestId("form-context").textContent).toContain("INV-7");
    expect(await screen.findByLabelText(/terms/)).toBeTruthy(); // the form's code loads on first use
  });

  it("a registered card shows the forms of its name, and is given the narrowed value and the submit verb", () => {
    unregister.push(registerFormCard("payment-terms", TermsCard, isTermsForm));
    expect(registeredForms()).toContain("payment-terms");
    const submit = show(form);
    expect(screen.getByTestId("terms-card").textContent).toContain("INV-7");
    expect(screen.queryByTestId("form-submit")).toBeNull();
    screen.getByRole("button", { name: "ok" }).click();
    expect(submit).toHaveBeenCalledWith("form-1", { decision: "approve", terms: "net-30", reminder: false });
  });

  it("another form name, or a value the card's guard refuses, still gets the generic card", async () => {
    unregister.push(registerFormCard("payment-terms", TermsCard, isTermsForm));
    show({ ...form, form: "credit-note" });
    expect(screen.queryByTestId("terms-card")).toBeNull();
    expect(await screen.findByLabelText(/terms/)).toBeTruthy();
    cleanup();
    show({ ...form, context: { amount: 420 } });
    expect(screen.queryByTestId("terms-card")).toBeNull();
    expect(screen.getByTestId("form-context").textContent).toContain("420");
  });

  it("taking a registration back leaves the generic card", () => {
    registerFormCard("payment-terms", TermsCard, isTermsForm)();
    expect(registeredForms()).not.toContain("payment-terms");
    show(form);
    expect(screen.queryByTestId("terms-card")).toBeNull();
  });
});
