/** Read-only JSON, for tool args and anything the app cannot render more specifically. */
export function Json({ value, testId }: { value: unknown; testId?: string }) {
  return (
    <pre className="json" data-testid={testId}>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}

export function formatTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}
