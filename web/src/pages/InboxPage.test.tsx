import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { InboxItem, InboxPage as InboxPageBody } from "../contracts/generated";
import { InboxPage } from "./InboxPage";

function row(id: string, group: string, tool: string): InboxItem {
  return {
    thread_id: `thread-${id}`,
    interrupt_id: `int-${id}`,
    action_index: 0,
    kind: "tool_approval",
    agent: "ledger",
    graph_id: "ledger",
    tool,
    tool_call_id: `call-${id}`,
    args: {},
    description: `${tool} ${id}`,
    allowed_decisions: ["approve", "reject"],
    required_role: group === "owner" ? "owner" : group === "supervisor" ? "supervisor" : "reviewer",
    group,
    owner: "requester1",
    created_at: "2026-12-05T08:00:00Z",
    deadline: null,
    escalated: false,
    age_seconds: 60,
  };
}

/** The caller's whole inbox: the server filters it by `group` and `mine`; `counts` is always the whole. */
const inbox = [row("1", "reviewer", "pay_invoice"), row("2", "supervisor", "pay_invoice"), row("3", "owner", "ask_for_details")];
const approvedByMe = new Set(["int-2"]);
const counts = { reviewer: 1, supervisor: 1, owner: 1 };

let requests: URLSearchParams[];

beforeEach(() => {
  requests = [];
  vi.stubGlobal(
    "fetch",
    vi.fn(async (input: string) => {
      const url = new URL(input);
      if (url.pathname === "/assistants/search") return Response.json([]);
      const query = url.searchParams;
      requests.push(query);
      const items = inbox.filter(
        (item) =>
          (!query.get("group") || item.group === query.get("group")) &&
          (query.get("mine") !== "true" || !approvedByMe.has(item.interrupt_id)),
      );
      const body: InboxPageBody = { items, next_cursor: null, total: items.length, counts };
      return Response.json(body);
    }),
  );
});

afterEach(() => vi.unstubAllGlobals());

const shown = () => screen.queryAllByTestId("inbox-row").map((r) => r.dataset.interruptId);
const lastQuery = () => Object.fromEntries(requests.at(-1) ?? []);

describe("the inbox's group filter, 'Waiting for me' and counts", () => {
  it("the header counts each group; choosing a group and 'Waiting for me' asks the server for them and shows its rows", async () => {
    render(<InboxPage token="tok-groups" />);
    await waitFor(() => expect(shown()).toEqual(["int-1", "int-2", "int-3"]));
    expect(lastQuery()).toEqual({ limit: "50" });
    const header = screen.getAllByTestId("inbox-counts-group").map((g) => [g.dataset.group, g.textContent]);
    expect(header).toEqual([
      ["reviewer", "reviewer: 1"],
      ["supervisor", "supervisor: 1"],
      ["owner", "your own questions: 1"],
    ]);
    const select = screen.getByTestId("inbox-filter-group") as HTMLSelectElement;
    expect([...select.options].map((o) => o.textContent)).toEqual([
      "All (3)",
      "reviewer (1)",
      "supervisor (1)",
      "your own questions (1)",
    ]);
    expect(screen.getByTestId("inbox-position").textContent).toBe("page 1 · 3 waiting");

    fireEvent.change(select, { target: { value: "supervisor" } });
    await waitFor(() => expect(shown()).toEqual(["int-2"]));
    expect(lastQuery()).toEqual({ limit: "50", group: "supervisor" });
    expect(screen.getByTestId("inbox-position").textContent).toBe("page 1 · 1 matching");
    expect(screen.getAllByTestId("inbox-row")[0]?.dataset.group).toBe("supervisor");

    fireEvent.click(screen.getByTestId("inbox-filter-mine"));
    await waitFor(() => expect(lastQuery()).toEqual({ limit: "50", group: "supervisor", mine: "true" }));
    expect((await screen.findByTestId("inbox-empty")).textContent).toBe("Nothing waiting matches these filters.");
    // the counts are the whole inbox's: filtering changes neither the header nor the options
    expect(screen.getAllByTestId("inbox-counts-group").map((g) => g.dataset.count)).toEqual(["1", "1", "1"]);
    expect([...select.options].map((o) => o.textContent)[0]).toBe("All (3)");

    fireEvent.change(select, { target: { value: "" } });
    await waitFor(() => expect(shown()).toEqual(["int-1", "int-3"]));
    expect(lastQuery()).toEqual({ limit: "50", mine: "true" });

    fireEvent.click(screen.getByTestId("inbox-filter-mine"));
    await waitFor(() => expect(shown()).toEqual(["int-1", "int-2", "int-3"]));
    expect(lastQuery()).toEqual({ limit: "50" });
  });

  it("a refused filter shows the server's message naming the parameter", async () => {
    vi.mocked(fetch).mockImplementation(async (input) => {
      const url = new URL(String(input));
      if (url.pathname === "/assistants/search") return Response.json([]);
      return Response.json({ detail: "group must be a group you decide as (got 'finance')" }, { status: 400 });
    });
    render(<InboxPage token="tok-refused" />);
    expect((await screen.findByTestId("inbox-error")).textContent).toBe("400: group must be a group you decide as (got 'finance')");
  });
});
