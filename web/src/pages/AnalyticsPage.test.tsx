import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { App } from "../App";
import { KINDS, type AnalyticsSummary, type Kind } from "../analytics/summary";

const zero = Object.fromEntries(KINDS.map((kind) => [kind, 0])) as Record<Kind, number>;
const quarter = { counts: { ...zero, approve: 1, edit: 1, reject: 1, expire: 1 }, rates: { ...zero, approve: 0.25, edit: 0.25, reject: 0.25, expire: 0.25 } };
const timings = { decisions: 4, timed: 4, median_seconds: 90, p90_seconds: 2556 };
const summary: AnalyticsSummary = {
  since: "2026-11-23T12:00:00+00:00",
  until: "2026-11-30T12:00:00+00:00",
  agent: null,
  tool: null,
  thresholds: { quick_seconds: 5, stamp_rate: 0.95, stamp_min_decisions: 5, rejected_rate: 0.5, rejected_min_decisions: 3 },
  totals: { ...timings, ...quarter, refused: 2, escalated: 1, not_applied: 1 },
  by_tool: [
    {
      tool: "pay_invoice",
      ...timings,
      ...quarter,
      edits: { amount: { changed: 1, mean_change: -200, mean_relative_change: -0.2225 } },
    },
  ],
  by_agent: [{ agent: "invoices", ...timings, ...quarter }],
  by_reviewer: [
    {
      reviewer: "reviewer1",
      decisions: 2,
      timed: 2,
      median_seconds: 31,
      p90_seconds: 54.2,
      counts: { ...zero, approve: 1, reject: 1 },
      rates: { ...zero, approve: 0.5, reject: 0.5 },
      quick_approvals: 1,
    },
  ],
  by_day: [{ day: "2026-11-29", ...zero, approve: 1, edit: 1, reject: 1, expire: 1 }],
  rubber_stamp: { quick_approvals: 1, quick_approval_rate: 1, reviewers_approving_nearly_all: [] },
  often_rejected: [],
  not_applied: [
    {
      thread_id: "3f1c9a0e-5b7d-4c2a-9e61-0d8b7f2a4c11",
      interrupt_id: "int-1",
      agent: "invoices",
      tool: "pay_invoice",
      outcome: "failed",
      at: "2026-11-29T10:15:00+00:00",
      why: "requester1's withdrawal could not start its run: the assistant is gone",
    },
  ],
};

let requests: string[];
let role: string;

beforeEach(() => {
  requests = [];
  role = "reviewer";
  window.sessionStorage.setItem("hitl.token", "dev-reviewer1");
  window.location.hash = "#/inbox";
  vi.stubGlobal(
    "fetch",
    vi.fn(async (input: string) => {
      const url = new URL(input);
      requests.push(url.pathname + url.search);
      if (url.pathname === "/analytics" && role === "requester") {
        return new Response(JSON.stringify({ detail: "/analytics is for reviewers and supervisors." }), { status: 403 });
      }
      const body =
        url.pathname === "/me"
          ? { identity: `${role}1`, role, decides_as: [role], staff: role !== "requester" }
          : url.pathname === "/analytics"
            ? summary
            : { items: [], next_cursor: null };
      return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
    }),
  );
});

afterEach(() => {
  cleanup();
  window.sessionStorage.clear();
  vi.unstubAllGlobals();
});

describe("analytics dashboard", () => {
  it("a reviewer's navigation links to it; it shows the API's numbers and re-reads for another period", async () => {
    render(<App />);
    expect((await screen.findByTestId("nav-analytics")).getAttribute("href")).toBe("#/analytics");
    window.location.hash = "#/analytics";
    window.dispatchEvent(new HashChangeEvent("hashchange"));

    // the dashboard's chunk (Recharts) loads on first open: slow on a busy machine (src/test/setup.ts's wait)
    expect((await screen.findByTestId("total-decisions")).textContent).toBe("4 decisions");
    expect(screen.getByTestId("total-median").textContent).toBe("1.5 min median");
    expect(screen.getByTestId("total-p90").textContent).toBe("42.6 min p90");
    expect(screen.getByTestId("total-refused").textContent).toBe("2 refused");
    const tool = screen.getAllByTestId("analytics-tool-row")[0]!;
    expect(tool.dataset.name).toBe("pay_invoice");
    expect(within(tool).getByText("amount ×1 (-200, -22%)")).toBeTruthy();
    const reviewer = screen.getAllByTestId("analytics-reviewer-row")[0]!;
    const rates = KINDS.map((kind) => (kind === "approve" || kind === "reject" ? "50%" : "0%"));
    expect(within(reviewer).getAllByRole("cell").map((c) => c.textContent)).toEqual([
      "reviewer1", "2", "31 s", "54 s", ...rates, "1",
    ]);
    expect(screen.getByTestId("signal-rejected").textContent).toContain("none");
    expect(screen.getByTestId("total-not-applied").textContent).toBe("1 not applied");
    const unapplied = screen.getByTestId("not-applied-row");
    expect(within(unapplied).getByText(/the assistant is gone/)).toBeTruthy();
    expect(within(unapplied).getByRole("link").getAttribute("href")).toBe(
      "#/threads/3f1c9a0e-5b7d-4c2a-9e61-0d8b7f2a4c11?agent=invoices",
    );
    expect(screen.getByTestId("chart-by-tool").querySelector("svg")).toBeTruthy();
    expect(requests.filter((r) => r.startsWith("/analytics"))).toEqual(["/analytics?since=7d"]);

    fireEvent.click(screen.getByTestId("period-30d"));
    await waitFor(() => expect(requests).toContain("/analytics?since=30d"));
  });

  it("a requester gets no link, and the page shows the server's refusal", async () => {
    role = "requester";
    render(<App />);
    await screen.findByTestId("inbox-page");
    await waitFor(() => expect(requests).toContain("/me"));
    expect(screen.queryByTestId("nav-analytics")).toBeNull();
    window.location.hash = "#/analytics";
    window.dispatchEvent(new HashChangeEvent("hashchange"));
    expect((await screen.findByTestId("analytics-error")).textContent).toContain("reviewers and supervisors");
  });
});
