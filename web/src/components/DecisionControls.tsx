/** The decision buttons of one tool call: only the allowed ones, each with its own input. */
import { useState } from "react";
import type { DecisionType } from "../contracts/generated";
import type { JsonObject } from "../interrupts/guards";
import type { JsonSchema } from "../interrupts/responseSchema";
import { ArgsEditor } from "./ArgsEditor";

interface DecisionControlsProps {
  allowed: DecisionType[];
  args: JsonObject;
  argsSchema: JsonSchema | null;
  disabled: boolean;
  idPrefix: string;
  onApprove: () => void;
  onEdit: (args: JsonObject) => void;
  onReject: (message?: string) => void;
  onRespond: (message: string) => void;
}

const LABELS: Record<DecisionType, string> = {
  approve: "Approve",
  edit: "Edit",
  reject: "Reject",
  respond: "Respond",
};

export function DecisionControls(props: DecisionControlsProps) {
  const { allowed, args, argsSchema, disabled, idPrefix } = props;
  const [mode, setMode] = useState<Exclude<DecisionType, "approve"> | null>(null);
  const [message, setMessage] = useState("");
  const close = () => {
    setMode(null);
    setMessage("");
  };

  if (mode === "edit") {
    return (
      <ArgsEditor
        args={args}
        schema={argsSchema}
        disabled={disabled}
        idPrefix={`${idPrefix}_edit`}
        onSave={(edited) => {
          close();
          props.onEdit(edited);
        }}
        onCancel={close}
      />
    );
  }

  if (mode === "reject" || mode === "respond") {
    const confirm = () => {
      const text = message.trim();
      if (mode === "respond" && !text) return;
      close();
      if (mode === "respond") props.onRespond(text);
      else props.onReject(text || undefined);
    };
    return (
      <div className="message-input">
        <textarea
          data-testid={`${mode}-message`}
          placeholder={mode === "respond" ? "Your answer (becomes the tool's result)" : "Reason (optional, the model sees it)"}
          value={message}
          disabled={disabled}
          onChange={(event) => setMessage(event.target.value)}
        />
        <div className="row">
          <button
            type="button"
            onClick={confirm}
            disabled={disabled || (mode === "respond" && !message.trim())}
            data-testid={`${mode}-confirm`}
          >
            {mode === "respond" ? "Send answer" : "Confirm reject"}
          </button>
          <button type="button" className="secondary" onClick={close} disabled={disabled}>
            Cancel
          </button>
        </div>
      </div>
    );
  }

  return (
    <div className="row decisions">
      {allowed.map((type) => (
        <button
          key={type}
          type="button"
          className={type === "approve" ? "primary" : type === "reject" ? "danger" : undefined}
          disabled={disabled}
          data-testid={`decision-${type}`}
          onClick={() => (type === "approve" ? props.onApprove() : setMode(type))}
        >
          {LABELS[type]}
        </button>
      ))}
    </div>
  );
}
