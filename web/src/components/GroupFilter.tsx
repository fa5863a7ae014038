/** The inbox's "group" filter: All, then each group the caller decides as, with how many rows wait for it. */
import { groupOptions } from "../present/inboxGroups";

interface GroupFilterProps {
  /** `GET /inbox`'s `counts`: the caller's whole inbox per group. */
  counts: Record<string, number>;
  /** The chosen group, "" for all. */
  value: string;
  onChange: (group: string) => void;
  testId: string;
}

export function GroupFilter({ counts, value, onChange, testId }: GroupFilterProps) {
  return (
    <label>
      group{" "}
      <select aria-label="Filter by group" data-testid={testId} value={value} onChange={(event) => onChange(event.target.value)}>
        {groupOptions(counts, value).map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </label>
  );
}
