/** Every pending approval the signed-in user may see, newest first; a row opens its thread. */
import { useState } from "react";
import { ASSISTANTS, isAssistantId } from "../config";
import type { InboxItem } from "../contracts/generated";
import { useInbox } from "../hooks/useInbox";
import { threadHref } from "../router";

function age(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  if (seconds < 129600) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86400)} d`;
}

function hrefOf(item: InboxItem): string {
  return threadHref(item.thread_id, isAssistantId(item.agent) ? item.agent : null);
}

export function InboxPage({ token }: { token: string }) {
  const [agent, setAgent] = useState("");
  const [tool, setTool] = useState("");
  const inbox = useInbox(token, { agent, tool });

  return (
    <div className="inbox" data-testid="inbox-page">
      <div className="row filters">
        <h2>Inbox</h2>
        <label>
          agent{" "}
          <input
            data-testid="inbox-filter-agent"
            list="inbox-agents"
            value={agent}
            placeholder="any"
            onChange={(event) => setAgent(event.target.value.trim())}
          />
          <datalist id="inbox-agents">
            {ASSISTANTS.map((name) => (
              <option key={name} value={name} />
            ))}
          </datalist>
        </label>
        <label>
          tool{" "}
          <input
            data-testid="inbox-filter-tool"
            value={tool}
            placeholder="any"
            onChange={(event) => setTool(event.target.value.trim())}
          />
        </label>
        <button type="button" className="secondary" onClick={inbox.refresh} data-testid="inbox-refresh">
          Refresh
        </button>
        <a href={threadHref(null, "support")} data-testid="new-conversation">
          New conversation
        </a>
      </div>
      {inbox.error && (
        <p className="error" role="alert" data-testid="inbox-error">
          {inbox.error}
        </p>
      )}
      {inbox.loaded && inbox.items.length === 0 && (
        <p className="muted" data-testid="inbox-empty">
          Nothing is waiting for a decision.
        </p>
      )}
      {inbox.items.length > 0 && (
        <table className="inbox-table">
          <thead>
            <tr>
              <th>tool</th>
              <th>agent</th>
              <th>description</th>
              <th>decisions</th>
              <th>needs</th>
              <th>owner</th>
              <th>waiting</th>
            </tr>
          </thead>
          <tbody>
            {inbox.items.map((item) => (
              <tr
                key={`${item.thread_id}|${item.interrupt_id}`}
                data-testid="inbox-row"
                data-thread-id={item.thread_id}
                data-interrupt-id={item.interrupt_id}
                data-kind={item.kind}
                data-tool={item.tool ?? ""}
                className="clickable"
                onClick={() => {
                  window.location.hash = hrefOf(item);
                }}
              >
                <td>
                  <a href={hrefOf(item)} onClick={(event) => event.stopPropagation()}>
                    <code>{item.tool ?? item.kind}</code>
                  </a>
                </td>
                <td>{item.agent ?? ""}</td>
                <td>{item.description ?? ""}</td>
                <td>{item.allowed_decisions?.join(", ") ?? ""}</td>
                <td>{item.required_role ?? ""}</td>
                <td>{item.owner ?? ""}</td>
                <td title={item.created_at}>{age(item.age_seconds)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="row">
        <button type="button" className="secondary" disabled={inbox.pageNumber <= 1} onClick={inbox.previous} data-testid="inbox-previous">
          Previous
        </button>
        <span className="muted">page {inbox.pageNumber}</span>
        <button type="button" className="secondary" disabled={!inbox.hasNext} onClick={inbox.next} data-testid="inbox-next">
          Next
        </button>
      </div>
    </div>
  );
}
