/** The inbox header's counts: how many rows wait for each group the caller decides as (the whole inbox, unfiltered). */
import { groupName } from "../present/inboxGroups";

interface GroupCountsProps {
  counts: Record<string, number>;
  testId: string;
}

export function GroupCounts({ counts, testId }: GroupCountsProps) {
  const groups = Object.entries(counts);
  if (!groups.length) return null;
  return (
    <ul className="group-counts" data-testid={testId} aria-label="Waiting per group">
      {groups.map(([group, count]) => (
        <li key={group} data-testid={`${testId}-group`} data-group={group} data-count={count}>
          {groupName(group)}: <strong>{count}</strong>
        </li>
      ))}
    </ul>
  );
}
