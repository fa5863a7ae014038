/** The dashboard (`#/analytics`): how approvals were decided in a period, with the numbers of `GET /analytics`. */
import { useState } from "react";
import { Bar, BarChart, CartesianGrid, Legend, Tooltip, XAxis, YAxis } from "recharts";
import { KINDS, type AnalyticsSummary, type Kind, type NotApplied, duration, percent } from "../analytics/summary";
import { AgentFilter } from "../components/AgentFilter";
import { FirstLineStats } from "../components/FirstLineStats";
import { useAgents } from "../hooks/useAgents";
import { PERIODS, type Period, useAnalytics } from "../hooks/useAnalytics";

/** A colour per way an approval ends: `tsc` fails when the contract adds one without a colour here. */
const COLORS: Record<Kind, string> = {
  approve: "#2e7d32",
  edit: "#2f5fd0",
  reject: "#b3261e",
  respond: "#8e44ad",
  answered: "#00897b",
  cancel: "#6d4c41",
  withdrawn: "#757575",
  declined: "#a1887f",
  cancelled: "#5d4037",
  expire: "#e0a400",
};
const CHART = { width: 470, height: 260 };
const PERIOD_NAMES: Record<Period, string> = { "24h": "24 hours", "7d": "7 days", "30d": "30 days", "90d": "90 days" };

function DecisionBars({ data, x, testId }: { data: object[]; x: string; testId: string }) {
  return (
    <figure className="chart" data-testid={testId}>
      <BarChart {...CHART} data={data}>
        <CartesianGrid strokeDasharray="3 3" />
        <XAxis dataKey={x} />
        <YAxis allowDecimals={false} />
        <Tooltip />
        <Legend />
        {KINDS.map((kind) => (
          <Bar key={kind} dataKey={kind} stackId="d" fill={COLORS[kind]} isAnimationActive={false} />
        ))}
      </BarChart>
    </figure>
  );
}

function Charts({ summary }: { summary: AnalyticsSummary }) {
  const byTool = summary.by_tool.map((t) => ({ tool: t.tool, ...t.counts }));
  const timings = summary.by_tool.map((t) => ({ tool: t.tool, median: t.median_seconds, p90: t.p90_seconds }));
  return (
    <div className="charts">
      <section>
        <h3>Decisions by tool</h3>
        <DecisionBars data={byTool} x="tool" testId="chart-by-tool" />
      </section>
      <section>
        <h3>Time to decision by tool (s)</h3>
        <figure className="chart" data-testid="chart-timings">
          <BarChart {...CHART} data={timings}>
            <CartesianGrid strokeDasharray="3 3" />
            <XAxis dataKey="tool" />
            <YAxis />
            <Tooltip />
            <Legend />
            <Bar dataKey="median" fill="#2f5fd0" isAnimationActive={false} />
            <Bar dataKey="p90" fill="#9db4ea" isAnimationActive={false} />
          </BarChart>
        </figure>
      </section>
      <section>
        <h3>Decisions per day</h3>
        <DecisionBars data={summary.by_day} x="day" testId="chart-by-day" />
      </section>
    </div>
  );
}

function StatsTable({ rows, name }: { rows: AnalyticsSummary["by_reviewer"] | AnalyticsSummary["by_agent"]; name: "reviewer" | "agent" }) {
  return (
    <table className="inbox-table" data-testid={`analytics-by-${name}`}>
      <thead>
        <tr>
          <th>{name}</th>
          <th>decisions</th>
          <th>median</th>
          <th>p90</th>
          {KINDS.map((kind) => (
            <th key={kind}>{kind}</th>
          ))}
          {name === "reviewer" && <th>quick approvals</th>}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => {
          const label = "reviewer" in row ? row.reviewer : row.agent;
          return (
            <tr key={label} data-testid={`analytics-${name}-row`} data-name={label}>
              <td>{label}</td>
              <td>{row.decisions}</td>
              <td>{duration(row.median_seconds)}</td>
              <td>{duration(row.p90_seconds)}</td>
              {KINDS.map((kind) => (
                <td key={kind}>{percent(row.rates[kind])}</td>
              ))}
              {"quick_approvals" in row && <td>{row.quick_approvals}</td>}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function ToolTable({ summary }: { summary: AnalyticsSummary }) {
  return (
    <table className="inbox-table" data-testid="analytics-by-tool">
      <thead>
        <tr>
          <th>tool</th>
          <th>decisions</th>
          <th>median</th>
          <th>p90</th>
          {KINDS.map((kind) => (
            <th key={kind}>{kind}</th>
          ))}
          <th>edited args</th>
        </tr>
      </thead>
      <tbody>
        {summary.by_tool.map((row) => (
          <tr key={row.tool} data-testid="analytics-tool-row" data-name={row.tool}>
            <td>
              <code>{row.tool}</code>
            </td>
            <td>{row.decisions}</td>
            <td>{duration(row.median_seconds)}</td>
            <td>{duration(row.p90_seconds)}</td>
            {KINDS.map((kind) => (
              <td key={kind}>{percent(row.rates[kind])}</td>
            ))}
            <td>
              {Object.entries(row.edits)
                .map(([arg, e]) =>
                  e.mean_change === null
                    ? `${arg} ×${e.changed}`
                    : `${arg} ×${e.changed} (${e.mean_change > 0 ? "+" : ""}${e.mean_change}` +
                      (e.mean_relative_change === null ? ")" : `, ${percent(e.mean_relative_change)})`),
                )
                .join("; ") || "–"}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Signals({ summary }: { summary: AnalyticsSummary }) {
  const { rubber_stamp: stamp, thresholds: limits } = summary;
  return (
    <ul className="signals" data-testid="analytics-signals">
      <li data-testid="signal-quick">
        Quick approvals (under {limits.quick_seconds} s after the pause): <strong>{stamp.quick_approvals}</strong> (
        {percent(stamp.quick_approval_rate)} of approvals)
      </li>
      <li data-testid="signal-stamp">
        Approving nearly everything (≥ {percent(limits.stamp_rate)} of at least {limits.stamp_min_decisions}):{" "}
        <strong>{stamp.reviewers_approving_nearly_all.join(", ") || "nobody"}</strong>
      </li>
      <li data-testid="signal-rejected">
        Rejected often (≥ {percent(limits.rejected_rate)} of at least {limits.rejected_min_decisions}):{" "}
        <strong>
          {summary.often_rejected.map((t) => `${t.tool} (${percent(t.reject_rate)} of ${t.decisions})`).join(", ") ||
            "none"}
        </strong>
      </li>
    </ul>
  );
}

/** Decisions accepted and not applied (a withdrawal whose run could not start, …): each opens its thread. */
function NotAppliedList({ rows }: { rows: NotApplied[] }) {
  if (rows.length === 0) return null;
  return (
    <section data-testid="analytics-not-applied">
      <h3>Accepted but not applied</h3>
      <table>
        <thead>
          <tr>
            <th>when</th>
            <th>thread</th>
            <th>agent</th>
            <th>tool</th>
            <th>why</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={`${row.thread_id}:${row.interrupt_id}:${row.at}`} data-testid="not-applied-row">
              <td>{row.at.slice(0, 19).replace("T", " ")}</td>
              <td>
                <a href={`#/threads/${encodeURIComponent(row.thread_id)}?agent=${encodeURIComponent(row.agent)}`}>
                  {row.thread_id.slice(0, 8)}
                </a>
              </td>
              <td>{row.agent}</td>
              <td>{row.tool}</td>
              <td>{row.why}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

export function AnalyticsPage({ token }: { token: string }) {
  const [period, setPeriod] = useState<Period>("7d");
  const [agent, setAgent] = useState("");
  const [tool, setTool] = useState("");
  const { summary, error, refresh } = useAnalytics(token, { period, agent, tool });
  const served = useAgents(token);
  const totals = summary?.totals;

  return (
    <div className="analytics" data-testid="analytics-page">
      <div className="row filters">
        <h2>Approvals</h2>
        <div className="row" role="group" aria-label="period">
          {PERIODS.map((p) => (
            <button
              key={p}
              type="button"
              className={p === period ? "primary" : "secondary"}
              aria-pressed={p === period}
              data-testid={`period-${p}`}
              onClick={() => setPeriod(p)}
            >
              {PERIOD_NAMES[p]}
            </button>
          ))}
        </div>
        <AgentFilter served={served} value={agent} onChange={setAgent} listId="analytics-agents" testId="analytics-filter-agent" />
        <label>
          tool{" "}
          <input value={tool} placeholder="any" data-testid="analytics-filter-tool" onChange={(e) => setTool(e.target.value.trim())} />
        </label>
        <button type="button" className="secondary" onClick={refresh} data-testid="analytics-refresh">
          Refresh
        </button>
      </div>
      {error && (
        <p className="error" role="alert" data-testid="analytics-error">
          {error}
        </p>
      )}
      {summary && totals && (
        <>
          <div className="tiles" data-testid="analytics-totals">
            <div className="tile" data-testid="total-decisions">
              <strong>{totals.decisions}</strong> decisions
            </div>
            <div className="tile" data-testid="total-median">
              <strong>{duration(totals.median_seconds)}</strong> median
            </div>
            <div className="tile" data-testid="total-p90">
              <strong>{duration(totals.p90_seconds)}</strong> p90
            </div>
            <div className="tile" data-testid="total-approve">
              <strong>{percent(totals.rates.approve)}</strong> approved
            </div>
            <div className="tile" data-testid="total-refused">
              <strong>{totals.refused}</strong> refused
            </div>
            <div className="tile" data-testid="total-escalated">
              <strong>{totals.escalated}</strong> escalated
            </div>
            {totals.not_applied !== undefined && (
              <div className="tile" data-testid="total-not-applied">
                <strong>{totals.not_applied}</strong> not applied
              </div>
            )}
          </div>
          {totals.decisions === 0 ? (
            <p className="muted" data-testid="analytics-empty">
              No decisions in the last {PERIOD_NAMES[period]}.
            </p>
          ) : (
            <>
              <Charts summary={summary} />
              <h3>By tool</h3>
              <ToolTable summary={summary} />
              <h3>By reviewer</h3>
              <StatsTable rows={summary.by_reviewer} name="reviewer" />
              <h3>By agent</h3>
              <StatsTable rows={summary.by_agent} name="agent" />
              <h3>Signals</h3>
              <Signals summary={summary} />
            </>
          )}
          <NotAppliedList rows={summary.not_applied ?? []} />
          <FirstLineStats rows={summary.first_line?.by_tool ?? []} />
        </>
      )}
    </div>
  );
}
