/** The dashboard's first-line table: per tool, what a model decided, what it sent to people, what was overturned. */
import { type FirstLineRow, percent } from "../analytics/summary";

function ms(value: number | null): string {
  return value === null ? "–" : `${value.toFixed(1)} ms`;
}

export function FirstLineStats({ rows }: { rows: FirstLineRow[] }) {
  if (rows.length === 0) return null;
  return (
    <section data-testid="first-line-stats">
      <h3>First-line reviewer (a model, not a person)</h3>
      <table>
        <thead>
          <tr>
            <th scope="col">tool</th>
            <th scope="col">asked</th>
            <th scope="col">decided by it</th>
            <th scope="col">sent to people</th>
            <th scope="col">overturned</th>
            <th scope="col">median</th>
            <th scope="col">p90</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.tool} data-testid="first-line-row" data-tool={row.tool}>
              <td>{row.tool}</td>
              <td>{row.asked}</td>
              <td data-testid="first-line-decided">
                {row.decided} ({percent(row.share_decided)})
              </td>
              <td>{row.sent_to_people}</td>
              <td data-testid="first-line-overturned">
                {row.overturned} of {row.approved}
              </td>
              <td>{ms(row.median_ms)}</td>
              <td>{ms(row.p90_ms)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
