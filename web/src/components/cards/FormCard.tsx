/** Any form a tool raises that has no card of its own (`registry.ts`): its context, and a form generated from the interrupt's response_schema. */
import type { Approvals } from "../../hooks/useApprovals";
import { ArgsTable } from "../ArgsTable";
import { SchemaForm } from "../SchemaForm";
import { CardFrame } from "./CardFrame";
import type { FormItem } from "./registry";

export function FormCard({ item, submit, busy }: { item: FormItem; submit: Approvals["submit"]; busy: boolean }) {
  const { value, responseSchema } = item;
  return (
    <CardFrame kind={item.kind} interruptId={item.id} subject={value.form} title={value.title} agent={value.agent} status={item.status} deadline={item.deadline}>
      {value.context && <ArgsTable args={value.context} testId="form-context" />}
      {responseSchema ? (
        <SchemaForm
          schema={responseSchema}
          disabled={busy || item.status.phase === "sending"}
          idPrefix={`rjsf_${item.id}`}
          submitLabel="Submit"
          submitTestId="form-submit"
          onSubmit={(data) => void submit(item.id, data)}
        />
      ) : (
        <p className="muted" data-testid="form-schema-missing">
          {item.schemaLoading ? "Loading form…" : "This form published no response schema."}
        </p>
      )}
    </CardFrame>
  );
}
