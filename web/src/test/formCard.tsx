/** Renders a pending form as its thread's owner sees it (the card registered for it, else the generic one). */
import { render } from "@testing-library/react";
import { vi } from "vitest";
import { InterruptCard } from "../components/cards/InterruptCard";
import type { FormRequest } from "../contracts/generated";
import type { Approvals, PendingApproval } from "../hooks/useApprovals";
import type { JsonSchema } from "../interrupts/responseSchema";
import { OWNER_ANSWERS } from "../present/deciders";

/** Show `value` with its answer schema to its owner, ana; the `submit` the card calls. */
export function showForm(value: FormRequest, responseSchema: JsonSchema, id = "form-1") {
  const submit = vi.fn(async () => {});
  const item: PendingApproval = {
    kind: "form",
    id,
    value,
    responseSchema,
    status: { phase: "idle" },
    schemaLoading: false,
    deadline: { deadline: null, onExpiry: null, escalated: false, escalatesTo: null },
    decider: OWNER_ANSWERS,
  };
  render(
    <InterruptCard
      item={item}
      approvals={{ submit } as unknown as Approvals}
      busy={false}
      viewer={{ identity: "ana", role: "requester", decides_as: ["requester"] }}
      owner="ana"
    />,
  );
  return submit;
}
