/**
 * The inbox's groups in words: the options of its group filter and the counts in its header, from
 * `GET /inbox`'s `counts` (the caller's whole inbox per group, each row counted once).
 */
import { OWNER } from "./deciders";

/** What a group is called on the page: `owner` is the caller's own questions; a role or group is its name. */
export function groupName(group: string): string {
  return group === OWNER ? "your own questions" : group;
}

export interface GroupOption {
  /** The `group` query parameter ("" for all). */
  value: string;
  label: string;
}

/**
 * "All (n)" first (n: every row of the inbox), then each group in the server's order with its count;
 * a chosen group the counts no longer name stays, with 0, so the filter keeps showing what is chosen.
 */
export function groupOptions(counts: Record<string, number>, selected: string): GroupOption[] {
  const groups = Object.entries(counts);
  if (selected && !(selected in counts)) groups.push([selected, 0]);
  const all = groups.reduce((sum, [, count]) => sum + count, 0);
  return [
    { value: "", label: `All (${all})` },
    ...groups.map(([group, count]) => ({ value: group, label: `${groupName(group)} (${count})` })),
  ];
}
