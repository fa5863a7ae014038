/**
 * Every pending approval the signed-in user may decide, oldest first; a row opens its thread.
 * Keys: `j` / `k` move the selection, `Enter` opens the selected row.
 */
import { useState } from "react";
import { AgentFilter } from "../components/AgentFilter";
import { FirstLineSamples } from "../components/FirstLineSamples";
import { GroupCounts } from "../components/GroupCounts";
import { GroupFilter } from "../components/GroupFilter";
import { InboxRow } from "../components/InboxRow";
import { WaitingForMe } from "../components/WaitingForMe";
import type { InboxItem } from "../contracts/generated";
import { useAgents } from "../hooks/useAgents";
import { useInbox } from "../hooks/useInbox";
import { useListKeys } from "../hooks/useListKeys";
import { threadHref } from "../router";

/** A row's thread, opened on its graph (`agent` may name a subagent; without a graph, the thread's metadata says). */
function hrefOf(item: InboxItem): string {
  return threadHref(item.thread_id, item.graph_id);
}

export function InboxPage({ token }: { token: string }) {
  const [agent, setAgent] = useState("");
  const [tool, setTool] = useState("");
  const [group, setGroup] = useState("");
  const [mine, setMine] = useState(false);
  const inbox = useInbox(token, { agent, tool, group, mine });
  const filtered = Boolean(agent || tool || group || mine);
  const served = useAgents(token);
  const keys = useListKeys(inbox.items.length, (index) => {
    const item = inbox.items[index];
    if (item) window.location.hash = hrefOf(item);
  });

  return (
    <div className="inbox" data-testid="inbox-page">
      <div className="row inbox-header">
        <h2>Inbox</h2>
        <GroupCounts counts={inbox.counts} testId="inbox-counts" />
      </div>
      <div className="row filters">
        <GroupFilter counts={inbox.counts} value={group} onChange={setGroup} testId="inbox-filter-group" />
        <WaitingForMe checked={mine} onChange={setMine} testId="inbox-filter-mine" />
        <AgentFilter served={served} value={agent} onChange={setAgent} listId="inbox-agents" testId="inbox-filter-agent" />
        <label>
          tool{" "}
          <input
            aria-label="Filter by tool"
            data-testid="inbox-filter-tool"
            value={tool}
            placeholder="any"
            onChange={(event) => setTool(event.target.value.trim())}
          />
        </label>
        <button type="button" className="secondary" onClick={inbox.refresh} data-testid="inbox-refresh">
          Refresh
        </button>
        <a href={threadHref(null)} data-testid="new-conversation">
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
          {filtered ? "Nothing waiting matches these filters." : "Nothing is waiting for a decision."}
        </p>
      )}
      {inbox.items.length > 0 && (
        <>
          <p className="muted small keys-hint">
            Keys: <kbd>j</kbd> / <kbd>k</kbd> to move, <kbd>Enter</kbd> to open.
          </p>
          <table className="inbox-table">
            <thead>
              <tr>
                <th scope="col">tool</th>
                <th scope="col">what</th>
                <th scope="col">agent</th>
                <th scope="col">needs</th>
                <th scope="col">owner</th>
                <th scope="col">due</th>
                <th scope="col">waiting</th>
              </tr>
            </thead>
            <tbody>
              {inbox.items.map((item, index) => (
                <InboxRow
                  key={`${item.thread_id}|${item.interrupt_id}|${index}`}
                  item={item}
                  href={hrefOf(item)}
                  selected={keys.selected === index}
                  onSelect={() => keys.select(index)}
                />
              ))}
            </tbody>
          </table>
        </>
      )}
      <div className="row">
        <button type="button" className="secondary" disabled={inbox.pageNumber <= 1} onClick={inbox.previous} data-testid="inbox-previous">
          Previous
        </button>
        <span className="muted" data-testid="inbox-position">
          page {inbox.pageNumber}
          {inbox.loaded && ` · ${inbox.total} ${filtered ? "matching" : "waiting"}`}
        </span>
        <button type="button" className="secondary" disabled={!inbox.hasNext} onClick={inbox.next} data-testid="inbox-next">
          Next
        </button>
      </div>
      <FirstLineSamples token={token} />
    </div>
  );
}
