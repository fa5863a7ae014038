import { act, renderHook, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../api/http";
import { agentsProblem, SEARCH_PAGE, servedAgentsOf, useAgents } from "./useAgents";
import { newConversationAgent } from "./useThreadAssistant";

const system = (graph_id: string, extra: object = {}) => ({
  assistant_id: `id-${graph_id}`,
  graph_id,
  metadata: { created_by: "system" },
  ...extra,
});

afterEach(() => vi.unstubAllGlobals());

describe("the agents the server serves", () => {
  it("are the system assistants' graph ids, once each and sorted; other assistants and odd rows are not agents", () => {
    const answer = [
      system("ledger"),
      { assistant_id: "a-2", graph_id: "ledger", metadata: { created_by: "supervisor1" } },
      system("billing"),
      { assistant_id: "a-3", graph_id: "hidden", metadata: {} },
      { assistant_id: "a-4", metadata: { created_by: "system" } },
      "not an assistant",
      system("billing", { assistant_id: "copy" }),
    ];
    expect(servedAgentsOf(answer)).toEqual(["billing", "ledger"]);
    expect(servedAgentsOf([])).toEqual([]);
  });

  it("a 401 and an unreachable server say what is wrong", () => {
    const base = "http://127.0.0.1:9";
    expect(agentsProblem(new ApiError(401, '{"detail": "Unknown token."}'), base)).toBe(
      "The server refused your token (401: Unknown token.): sign out and sign in with a token it knows.",
    );
    expect(agentsProblem(new TypeError("Failed to fetch"), base)).toBe(
      "The server at http://127.0.0.1:9 did not answer (Failed to fetch): is it running?",
    );
    expect(agentsProblem(new ApiError(500, "boom"), base)).toBe("Cannot read the agents the server serves: 500: boom");
  });

  it("a new conversation opens on the URL's agent when served, else on the first served agent, else says why not", () => {
    const ready = { status: "ready", agents: ["billing", "ledger"] } as const;
    expect(newConversationAgent(null, ready)).toEqual({ assistantId: "billing", error: null });
    expect(newConversationAgent("ledger", ready)).toEqual({ assistantId: "ledger", error: null });
    expect(newConversationAgent("payroll", ready).error).toBe('The server serves no agent "payroll" (it serves: billing, ledger).');
    expect(newConversationAgent(null, { status: "ready", agents: [] }).error).toMatch(/serves no agent yet/);
    expect(newConversationAgent(null, { status: "loading" })).toEqual({ assistantId: null, error: null });
    expect(newConversationAgent(null, { status: "failed", error: "down" })).toEqual({ assistantId: null, error: "down" });
  });
});

describe("useAgents", () => {
  it("asks POST /assistants/search with the token, reads every page, and asks once per token for the session", async () => {
    const pages = [
      Array.from({ length: SEARCH_PAGE }, (_, i) => system(`graph-${String(i).padStart(3, "0")}`)),
      [system("zeta"), system("alpha")],
    ];
    const calls: { url: string; method?: string; authorization: string | null; body: unknown }[] = [];
    vi.stubGlobal(
      "fetch",
      vi.fn(async (url: string, init?: RequestInit) => {
        const body = JSON.parse(String(init?.body)) as { offset: number };
        calls.push({ url, method: init?.method, authorization: new Headers(init?.headers).get("authorization"), body });
        return Response.json(pages[body.offset / SEARCH_PAGE] ?? []);
      }),
    );
    const first = renderHook(() => useAgents("tok-pages"));
    await waitFor(() => expect(first.result.current.status).toBe("ready"));
    const agents = first.result.current.status === "ready" ? first.result.current.agents : [];
    expect(agents).toHaveLength(SEARCH_PAGE + 2);
    expect(agents[0]).toBe("alpha");
    expect(agents.at(-1)).toBe("zeta");
    expect(calls.map((c) => [new URL(c.url).pathname, c.method, c.authorization])).toEqual([
      ["/assistants/search", "POST", "Bearer tok-pages"],
      ["/assistants/search", "POST", "Bearer tok-pages"],
    ]);
    expect(calls[0]?.body).toEqual({ metadata: { created_by: "system" }, limit: SEARCH_PAGE, offset: 0 });

    const again = renderHook(() => useAgents("tok-pages"));
    expect(again.result.current.status).toBe("ready");
    expect(calls).toHaveLength(2);
  });

  it("a failure is shown and not kept: retry asks again", async () => {
    let answer = () => new Response('{"detail": "Unknown token."}', { status: 401 });
    vi.stubGlobal("fetch", vi.fn(async () => answer()));
    const { result } = renderHook(() => useAgents("tok-retry"));
    await waitFor(() => expect(result.current.status).toBe("failed"));
    expect(result.current.status === "failed" && result.current.error).toMatch(/refused your token \(401/);

    answer = () => Response.json([system("ledger")]);
    act(() => result.current.retry());
    await waitFor(() => expect(result.current.status).toBe("ready"));
    expect(result.current.status === "ready" && result.current.agents).toEqual(["ledger"]);
  });
});
