import { cleanup, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import type { FormRequest } from "../../contracts/generated";
import { isFormRequest, isRecord } from "../../interrupts/guards";
import { form, formSchema } from "../../test/fixtures";
import { showForm } from "../../test/formCard";
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
  return showForm(value, formSchema, "form-1");
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
