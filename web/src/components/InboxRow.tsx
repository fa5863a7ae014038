/** One pending approval in the inbox: what, who asks, who may decide, when it is due; a click opens it. */
import { useEffect, useRef } from "react";
import type { InboxItem } from "../contracts/generated";
import { age, alsoWaiting, inboxRowStatus } from "../present/inboxRow";
import { DeadlineBadge } from "./DeadlineBadge";
import { QuorumProgress } from "./QuorumProgress";

interface InboxRowProps {
  item: InboxItem;
  href: string;
  selected: boolean;
  onSelect: () => void;
}

export function InboxRow({ item, href, selected, onSelect }: InboxRowProps) {
  const status = inboxRowStatus(item);
  const others = alsoWaiting(item);
  const row = useRef<HTMLTableRowElement>(null);
  useEffect(() => {
    if (selected) row.current?.scrollIntoView?.({ block: "nearest" });
  }, [selected]);
  return (
    <tr
      ref={row}
      data-testid="inbox-row"
      data-thread-id={item.thread_id}
      data-interrupt-id={item.interrupt_id}
      data-kind={item.kind}
      data-tool={item.tool ?? ""}
      data-group={item.group}
      data-selected={selected}
      aria-current={selected ? "true" : undefined}
      data-escalated={status.escalated}
      className={`clickable${selected ? " selected" : ""}${status.escalated ? " escalated" : ""}`}
      onClick={() => {
        onSelect();
        window.location.hash = href;
      }}
    >
      <td data-label="tool">
        <a href={href} onClick={(event) => event.stopPropagation()} className="tool-name">
          {item.tool ?? item.kind}
        </a>
      </td>
      <td data-label="what">
        {item.description ?? ""}
        {others && (
          <p className="muted also-waiting" data-testid="also-waiting">
            Also waiting on this thread: {others}.
          </p>
        )}
      </td>
      <td data-label="agent">{item.agent ?? ""}</td>
      <td data-label="needs">{item.required_role ?? ""}</td>
      <td data-label="owner">{item.owner ?? ""}</td>
      <td data-label="due" data-testid="inbox-due">
        <div className="due-cell">
          <DeadlineBadge deadline={status.deadline} escalated={status.escalated} compact />
          <QuorumProgress quorum={status.quorum} />
        </div>
      </td>
      <td data-label="waiting" title={item.created_at}>
        {age(item.age_seconds)}
      </td>
    </tr>
  );
}
