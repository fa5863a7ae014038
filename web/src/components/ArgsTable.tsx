/** A tool call's args as a two-column table: the field in words, the value as written. */
import { isRecord } from "../interrupts/guards";
import { formatValue, humanizeKey } from "../present/summaries";
import { Json } from "./Json";

export function ArgsTable({ args, testId = "action-args" }: { args: unknown; testId?: string }) {
  if (!isRecord(args)) return <Json value={args} testId={testId} />;
  const entries = Object.entries(args);
  if (entries.length === 0) return <p className="muted" data-testid={testId}>No arguments.</p>;
  return (
    <table className="args-table" data-testid={testId}>
      <tbody>
        {entries.map(([key, value]) => (
          <tr key={key} data-testid="arg" data-name={key}>
            <th scope="row" title={key}>
              {humanizeKey(key)}
            </th>
            <td>
              {isRecord(value) || (Array.isArray(value) && value.some((v) => isRecord(v) || Array.isArray(v))) ? (
                <Json value={value} />
              ) : (
                <span className="arg-value">{formatValue(value)}</span>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
