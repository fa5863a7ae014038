/** Message box; on a new conversation also the agent picker, offering the agents the server serves. */
import { useState } from "react";

interface ComposerProps {
  assistantId: string;
  /** The agents the server serves (`useAgents`); the thread's own agent is offered even if it is not among them. */
  agents: readonly string[];
  canChooseAssistant: boolean;
  disabled: boolean;
  onAssistantChange: (assistantId: string) => void;
  onSend: (text: string) => void;
}

export function Composer({ assistantId, agents, canChooseAssistant, disabled, onAssistantChange, onSend }: ComposerProps) {
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
        {agents.map((name) => (
          <option key={name} value={name}>
            {name}
          </option>
        ))}
        {!agents.includes(assistantId) && <option value={assistantId}>{assistantId}</option>}
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
