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
  group: "supervisor",
  owner: "requester1",
  created_at: "2026-11-30T10:00:00Z",
  age_seconds: 120,
  kind: "batched",
};

let requests: { path: string; authorization: string | null }[];

/** What this server serves, as LangGraph's `POST /assistants/search` answers (a supervisor's own assistant too). */
const assistants = [
  { assistant_id: "a-ledger", graph_id: "ledger", metadata: { created_by: "system" } },
  { assistant_id: "a-billing", graph_id: "billing", metadata: { created_by: "system" } },
  { assistant_id: "a-mine", graph_id: "billing", metadata: { created_by: "supervisor1" } },
];
let assistantsAnswer: () => Response;
let threadAnswer: () => Response;

beforeEach(() => {
  requests = [];
  assistantsAnswer = () => Response.json(assistants);
  threadAnswer = () => Response.json({ thread_id: "thread-9", metadata: { graph_id: "ledger" } });
  window.sessionStorage.clear();
  window.location.hash = "#/inbox";
  vi.stubGlobal(
    "fetch",
    vi.fn(async (input: string, init?: RequestInit) => {
      const url = new URL(input);
      requests.push({ path: url.pathname + url.search, authorization: new Headers(init?.headers).get("authorization") });
      if (url.pathname === "/assistants/search") return assistantsAnswer();
      if (url.pathname === "/threads/thread-9") return threadAnswer();
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
    expect(screen.getByTestId("nav-new").getAttribute("href")).toBe("#/threads/new");
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

/** Signs `token` in (each test its own: the agents are kept per token for the session) and opens `hash`. */
function openSignedIn(token: string, hash: string) {
  window.sessionStorage.setItem("hitl.token", token);
  window.location.hash = hash;
  render(<App />);
}

function optionsOf(select: HTMLElement): string[] {
  return [...select.querySelectorAll("option")].map((option) => option.value);
}

describe("agents are discovered from the server", () => {
  it("the picker lists what /assistants/search answers, and a new conversation opens on the first of them", async () => {
    openSignedIn("tok-picker", "#/threads/new");
    const picker = await screen.findByTestId("assistant-select");
    expect(optionsOf(picker)).toEqual(["billing", "ledger"]);
    expect((picker as HTMLSelectElement).value).toBe("billing");
    const search = requests.filter((r) => r.path === "/assistants/search");
    expect(search).toEqual([{ path: "/assistants/search", authorization: "Bearer tok-picker" }]);

    fireEvent.change(picker, { target: { value: "ledger" } });
    expect(window.location.hash).toBe("#/threads/new?agent=ledger");
    await waitFor(() => expect((screen.getByTestId("assistant-select") as HTMLSelectElement).value).toBe("ledger"));
    expect(requests.filter((r) => r.path === "/assistants/search")).toHaveLength(1);
  });

  it("the inbox and dashboard agent filters suggest the served agents; the new-conversation link names none", async () => {
    openSignedIn("tok-filters", "#/inbox");
    await waitFor(() => expect(optionsOf(screen.getByTestId("inbox-filter-agent-options"))).toEqual(["billing", "ledger"]));
    expect(screen.getByTestId("new-conversation").getAttribute("href")).toBe("#/threads/new");
  });

  it("an agent the server does not serve is named as such, with what it does serve", async () => {
    openSignedIn("tok-unknown", "#/threads/new?agent=payroll");
    expect((await screen.findByTestId("thread-error")).textContent).toBe(
      'The server serves no agent "payroll" (it serves: billing, ledger).',
    );
  });

  it("a refused token says so, and Try again asks the server again", async () => {
    assistantsAnswer = () => new Response('{"detail": "Unknown token."}', { status: 401 });
    openSignedIn("tok-refused", "#/threads/new");
    expect((await screen.findByTestId("thread-error")).textContent).toMatch(/^The server refused your token \(401: Unknown token\.\)/);
    assistantsAnswer = () => Response.json(assistants);
    fireEvent.click(screen.getByTestId("agents-retry"));
    expect(optionsOf(await screen.findByTestId("assistant-select"))).toEqual(["billing", "ledger"]);
  });

  it("an unreachable server says where it looked", async () => {
    assistantsAnswer = () => {
      throw new TypeError("Failed to fetch");
    };
    openSignedIn("tok-down", "#/inbox");
    expect((await screen.findByTestId("agents-error")).textContent).toMatch(/did not answer \(Failed to fetch\): is it running\?/);
  });

  it("a thread opened without its agent takes it from its metadata; one that names none says so", async () => {
    openSignedIn("tok-thread", "#/threads/thread-9");
    await waitFor(() => expect(screen.getByTestId("assistant-select")).toHaveProperty("disabled", true));
    expect((screen.getByTestId("assistant-select") as HTMLSelectElement).value).toBe("ledger");
    cleanup();
    threadAnswer = () => Response.json({ thread_id: "thread-9", metadata: {} });
    openSignedIn("tok-thread", "#/threads/thread-9");
    expect((await screen.findByTestId("thread-error")).textContent).toBe(
      "Thread thread-9 names no agent in its metadata (graph_id), so it cannot be opened here.",
    );
  });
});
