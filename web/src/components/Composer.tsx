/** Message box; on a new conversation also the assistant picker. */
import { useState } from "react";
import { ASSISTANTS } from "../config";

interface ComposerProps {
  assistantId: string;
  canChooseAssistant: boolean;
  disabled: boolean;
  onAssistantChange: (assistantId: string) => void;
  onSend: (text: string) => void;
}

export function Composer({ assistantId, canChooseAssistant, disabled, onAssistantChange, onSend }: ComposerProps) {
  const [text, setText] = useState("");
  const send = () => {
    if (!text.trim()) return;
    onSend(text);
    setText("");
  };
  return (
    <form
      className="composer"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <select
        aria-label="Assistant"
        data-testid="assistant-select"
        value={assistantId}
        disabled={!canChooseAssistant}
        onChange={(event) => onAssistantChange(event.target.value)}
      >
        {ASSISTANTS.map((name) => (
          <option key={name} value={name}>
            {name}
          </option>
        ))}
        {!(ASSISTANTS as readonly string[]).includes(assistantId) && <option value={assistantId}>{assistantId}</option>}
      </select>
      <textarea
        aria-label="Message the agent"
        data-testid="message-input"
        placeholder="Message the agent"
        value={text}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={(event) => {
          if (event.key === "Enter" && (event.metaKey || event.ctrlKey)) send();
        }}
      />
      <button type="submit" className="primary" disabled={disabled || !text.trim()} data-testid="message-send">
        Send
      </button>
    </form>
  );
}
