/**
 * Custom cards for forms, registered by the form's name (`FormRequest.form`, the name the tool
 * registered its answer model under with `hitl.contracts.forms.register_form`). `InterruptCard` asks here
 * first; a form nobody registered a card for, or whose value fails the card's guard, gets the
 * generic `FormCard` built from its `response_schema`. The layer registers nothing itself.
 */
import { createElement, type ComponentType, type ReactElement } from "react";
import type { FormRequest } from "../../contracts/generated";
import type { Approvals, PendingApproval } from "../../hooks/useApprovals";

export type FormItem = Extract<PendingApproval, { kind: "form" }>;

/** A form's own value type, from the generated contracts (e.g. `FormRequest` with a `context` of its own). */
export type FormValue = Pick<FormRequest, "type" | "form" | "title" | "agent" | "tool_call_id">;

/** What a registered form card is given: the pending form, its value (narrowed by the guard) and the verb that answers it. */
export interface FormCardProps<Value extends FormValue = FormRequest> {
  item: FormItem;
  value: Value;
  submit: Approvals["submit"];
  busy: boolean;
}

type RenderCard = (props: Omit<FormCardProps, "value">) => ReactElement | null;

const cards = new Map<string, RenderCard>();

/**
 * Shows forms named `form` with `Card`, for values that pass `guard` (the form's shape, from the
 * generated contracts). A later registration of the same name replaces the earlier one (module
 * reloads re-register). Returns a function that takes the registration back.
 */
export function registerFormCard<Value extends FormValue>(
  form: string,
  Card: ComponentType<FormCardProps<Value>>,
  guard: (value: unknown) => value is Value,
): () => void {
  const render: RenderCard = ({ item, submit, busy }) =>
    guard(item.value) ? createElement(Card, { item, value: item.value, submit, busy }) : null;
  cards.set(form, render);
  return () => {
    if (cards.get(form) === render) cards.delete(form);
  };
}

/** The registered card for this form, or `null` when it has none (or its value does not fit the card). */
export function registeredFormCard(props: Omit<FormCardProps, "value">): ReactElement | null {
  const render = cards.get(props.item.value.form);
  return render ? render(props) : null;
}

/** The form names that have a card of their own. */
export function registeredForms(): string[] {
  return [...cards.keys()].sort();
}
