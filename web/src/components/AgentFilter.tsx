/** The "agent" filter of a list: free text, suggesting the agents the server serves (`useAgents`). */
import type { AgentsView } from "../hooks/useAgents";

interface AgentFilterProps {
  served: AgentsView;
  value: string;
  onChange: (agent: string) => void;
  /** The datalist's id, unique on the page. */
  listId: string;
  testId: string;
}

export function AgentFilter({ served, value, onChange, listId, testId }: AgentFilterProps) {
  return (
    <>
      <label>
        agent{" "}
        <input
          aria-label="Filter by agent"
          data-testid={testId}
          list={listId}
          value={value}
          placeholder={served.status === "loading" ? "any (reading agents…)" : "any"}
          onChange={(event) => onChange(event.target.value.trim())}
        />
        <datalist id={listId} data-testid={`${testId}-options`}>
          {served.status === "ready" && served.agents.map((name) => <option key={name} value={name} />)}
        </datalist>
      </label>
      {served.status === "failed" && (
        <span className="error-text small" role="alert" data-testid="agents-error">
          {served.error}{" "}
          <button type="button" className="secondary" onClick={served.retry} data-testid="agents-retry">
            Try again
          </button>
        </span>
      )}
    </>
  );
}
