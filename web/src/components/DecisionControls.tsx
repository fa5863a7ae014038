/**
 * The decision buttons of one tool call: only the allowed ones, each with its own input.
 * Keys: `a` approve, `r` reject (opens the reason box), `e` edit (see `useDecisionKeys`).
 */
import { useRef, useState } from "react";
import type { DecisionType } from "../contracts/generated";
import type { JsonObject } from "../interrupts/guards";
import type { JsonSchema } from "../interrupts/responseSchema";
import { DECISION_KEYS_ATTR, useDecisionKeys } from "../hooks/useDecisionKeys";
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

const KEYS: Partial<Record<DecisionType, string>> = { approve: "a", edit: "e", reject: "r" };

export function DecisionControls(props: DecisionControlsProps) {
  const { allowed, args, argsSchema, disabled, idPrefix } = props;
  const [mode, setMode] = useState<Exclude<DecisionType, "approve"> | null>(null);
  const [message, setMessage] = useState("");
  const close = () => {
    setMode(null);
    setMessage("");
  };
  const own = useRef<HTMLDivElement>(null);
  const may = (type: DecisionType) => allowed.includes(type);
  useDecisionKeys(
    own,
    {
      approve: may("approve") ? props.onApprove : undefined,
      reject: may("reject") ? () => setMode("reject") : undefined,
      edit: may("edit") ? () => setMode("edit") : undefined,
    },
    mode === null && !disabled,
  );
  const keyed = { ref: own, [DECISION_KEYS_ATTR]: "" };

  if (mode === "edit") {
    return (
      <div {...keyed}>
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
      </div>
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
    const label = mode === "respond" ? "Your answer (becomes the tool's result)" : "Reason (optional, the model sees it)";
    return (
      <div className="message-input" {...keyed}>
        <textarea
          autoFocus
          aria-label={label}
          data-testid={`${mode}-message`}
          placeholder={label}
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
    <div className="row decisions" {...keyed}>
      {allowed.map((type) => (
        <button
          key={type}
          type="button"
          aria-keyshortcuts={KEYS[type]}
          title={KEYS[type] ? `${LABELS[type]} (key ${KEYS[type]})` : undefined}
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
