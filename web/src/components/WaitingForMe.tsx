/** The inbox's "Waiting for me" toggle: only rows the caller may decide and has not approved yet (a quorum's too). */

interface WaitingForMeProps {
  checked: boolean;
  onChange: (mine: boolean) => void;
  testId: string;
}

export function WaitingForMe({ checked, onChange, testId }: WaitingForMeProps) {
  return (
    <label title="Only what you may decide and have not approved yet: a quorum you approved waits for the others, not you.">
      <input type="checkbox" data-testid={testId} checked={checked} onChange={(event) => onChange(event.target.checked)} />{" "}
      Waiting for me
    </label>
  );
}
