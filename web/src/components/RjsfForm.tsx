/** The form rjsf generates from a JSON Schema, with the app's submit button; loaded on first use (`SchemaForm`). */
import Form from "@rjsf/core";
import type { RJSFSchema } from "@rjsf/utils";
import validator from "@rjsf/validator-ajv8";
import type { JsonObject } from "../interrupts/guards";
import type { JsonSchema } from "../interrupts/responseSchema";

export interface SchemaFormProps {
  schema: JsonSchema;
  initial?: JsonObject;
  disabled: boolean;
  idPrefix: string;
  submitLabel: string;
  submitTestId: string;
  onSubmit: (data: JsonObject) => void;
  onCancel?: () => void;
}

/**
 * The schema without its root `title`: rjsf would show it as the form's legend, and a model's title is its
 * class name ("MissingReceiptAnswer"); the card's own heading (the form's `title`, the tool's name) says it.
 */
function untitled(schema: JsonSchema): RJSFSchema {
  const { title: _title, ...rest } = schema;
  return rest as RJSFSchema;
}

export default function RjsfForm(props: SchemaFormProps) {
  const { schema, initial, disabled, idPrefix, submitLabel, submitTestId, onSubmit, onCancel } = props;
  return (
    <Form<JsonObject, RJSFSchema>
      className="schema-form"
      schema={untitled(schema)}
      validator={validator}
      formData={initial}
      disabled={disabled}
      idPrefix={idPrefix}
      showErrorList={false}
      onSubmit={({ formData }) => onSubmit(formData ?? {})}
    >
      <div className="row">
        <button type="submit" disabled={disabled} data-testid={submitTestId}>
          {submitLabel}
        </button>
        {onCancel && (
          <button type="button" className="secondary" onClick={onCancel} disabled={disabled}>
            Cancel
          </button>
        )}
      </div>
    </Form>
  );
}
