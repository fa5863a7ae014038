/**
 * A form generated from a JSON Schema (forms, edited tool args), with the app's submit button.
 *
 * rjsf and its validator (ajv) are about a quarter of the app's code and only a form card or an
 * edit needs them: they load as a chunk of their own when the first such form shows, not with the app.
 */
import { lazy, Suspense } from "react";
import type { SchemaFormProps } from "./RjsfForm";

const RjsfForm = lazy(() => import("./RjsfForm"));

export function SchemaForm(props: SchemaFormProps) {
  return (
    <Suspense
      fallback={
        <p className="muted" data-testid="schema-form-loading">
          Loading the form…
        </p>
      }
    >
      <RjsfForm {...props} />
    </Suspense>
  );
}
