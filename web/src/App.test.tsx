import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { App } from "./App";
import type { InboxItem } from "./contracts/generated";

const row: InboxItem = {
  thread_id: "thread-9",
  interrupt_id: "int-9",
  action_index: 0,
  graph_id: "invoices",
  tool_call_id: "call-9",
  deadline: null,
  escalated: false,
  agent: "invoices",
  tool: "pay_invoice",
  args: { invoice_id: "INV-1", amount: 899 },
  description: "Pay 899 on INV-1",
  allowed_decisions: ["approve", "edit", "reject"],
  required_role: "supervisor",
  owner: "requester1",
  created_at: "2026-11-30T10:00:00Z",
  age_seconds: 120,
  kind: "batched",
};

let requests: { path: string; authorization: string | null }[];

beforeEach(() => {
  requests = [];
  window.sessionStorage.clear();
  window.location.hash = "#/inbox";
  vi.stubGlobal(
    "fetch",
    vi.fn(async (input: string, init?: RequestInit) => {
      const url = new URL(input);
      requests.push({ path: url.pathname + url.search, authorization: new Headers(init?.headers).get("authorization") });
      const body =
        url.pathname === "/app-config"
          ? { dev_users: [{ name: "reviewer1", role: "reviewer", token: "dev-reviewer1" }] }
          : url.pathname === "/inbox"
            ? { items: [row], next_cursor: null }
            : {};
      return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
    }),
  );
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe("sign-in and inbox", () => {
  it("a dev user signs in with one click; the inbox is read with their bearer token", async () => {
    render(<App />);
    fireEvent.click(await screen.findByTestId("dev-user-reviewer1"));
    expect(window.sessionStorage.getItem("hitl.token")).toBe("dev-reviewer1");

    const rows = await screen.findAllByTestId("inbox-row");
    expect(rows.map((r) => r.dataset.interruptId)).toEqual(["int-9"]);
    const inbox = requests.filter((r) => r.path.startsWith("/inbox"));
    expect(inbox[0]).toEqual({ path: "/inbox?limit=50", authorization: "Bearer dev-reviewer1" });

    fireEvent.click(rows[0]!);
    expect(window.location.hash).toBe("#/threads/thread-9?agent=invoices");
  });

  it("without /app-config only the token box is offered, and the token is kept for the tab", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => new Response("no", { status: 404 })));
    render(<App />);
    await waitFor(() => expect(screen.queryByTestId("dev-users")).toBeNull());
    fireEvent.change(screen.getByTestId("signin-token"), { target: { value: " my-token " } });
    fireEvent.click(screen.getByTestId("signin-submit"));
    expect(window.sessionStorage.getItem("hitl.token")).toBe("my-token");
    expect(await screen.findByTestId("inbox-error")).toBeTruthy();
  });
});
