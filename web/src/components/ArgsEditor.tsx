/** Edits a tool call's args: a generated form when the edit schema is known, else raw JSON. */
import { useState } from "react";
import { isRecord, type JsonObject } from "../interrupts/guards";
import type { JsonSchema } from "../interrupts/responseSchema";
import { SchemaForm } from "./SchemaForm";

interface ArgsEditorProps {
  args: JsonObject;
  schema: JsonSchema | null;
  disabled: boolean;
  idPrefix: string;
  onSave: (args: JsonObject) => void;
  onCancel: () => void;
}

export function ArgsEditor({ args, schema, disabled, idPrefix, onSave, onCancel }: ArgsEditorProps) {
  const [text, setText] = useState(() => JSON.stringify(args, null, 2));
  const [problem, setProblem] = useState<string | null>(null);

  if (schema) {
    return (
      <SchemaForm
        schema={schema}
        initial={args}
        disabled={disabled}
        idPrefix={idPrefix}
        submitLabel="Save edit"
        submitTestId="edit-save"
        onSubmit={onSave}
        onCancel={onCancel}
      />
    );
  }

  const save = () => {
    try {
      const parsed: unknown = JSON.parse(text);
      if (!isRecord(parsed)) throw new Error("args must be a JSON object");
      setProblem(null);
      onSave(parsed);
    } catch (error) {
      setProblem(error instanceof Error ? error.message : String(error));
    }
  };

  return (
    <div className="args-editor">
      <textarea
        data-testid="edit-args-json"
        value={text}
        rows={Math.min(12, text.split("\n").length + 1)}
        disabled={disabled}
        onChange={(event) => setText(event.target.value)}
      />
      {problem && (
        <p className="error" data-testid="edit-args-error">
          {problem}
        </p>
      )}
      <div className="row">
        <button type="button" onClick={save} disabled={disabled} data-testid="edit-save">
          Save edit
        </button>
        <button type="button" className="secondary" onClick={onCancel} disabled={disabled}>
          Cancel
        </button>
      </div>
    </div>
  );
}
