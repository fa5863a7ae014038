/**
 * useApprovals on the real @langchain/react stack, with only `fetch` faked: proves the
 * bearer token reaches every request, that `/threads/{id}/commands` refusing with
 * HTTP 200 `{"type": "error"}` is caught and shown on the card, and that an answer the engine
 * does not find yet (the run that asked is still ending) is sent again.
 */
import { act, renderHook, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { toolApproval } from "../test/fixtures";
import { useApprovals } from "./useApprovals";

const API = "http://api.test";
const THREAD = "thread-1";
const REFUSAL = "403: reviewer1 may not approve archive_file";

interface Seen {
  method: string;
  url: string;
  authorization: string | null;
  body: unknown;
}

let seen: Seen[];
let commandAnswer: (command: { id: number }) => unknown;

function json(body: unknown) {
  return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
}

/** An SSE stream that stays open (no events) until the client aborts it. */
function silentEventStream(signal?: AbortSignal | null) {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      signal?.addEventListener("abort", () => controller.close());
    },
  });
  return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } });
}

const threadState = {
  values: { messages: [] },
  next: ["tools"],
  tasks: [{ id: "task-1", name: "tools", interrupts: [{ id: "int-a", value: toolApproval }], checkpoint: null }],
  interrupts: [{ id: "int-a", value: toolApproval }],
  metadata: {},
  checkpoint: { thread_id: THREAD, checkpoint_ns: "", checkpoint_id: "c1" },
};

beforeEach(() => {
  seen = [];
  commandAnswer = (command) => ({ type: "success", id: command.id, result: {} });
  vi.stubGlobal(
    "fetch",
    vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      const headers = new Headers(init?.headers);
      const body: unknown = typeof init?.body === "string" ? JSON.parse(init.body) : undefined;
      seen.push({ method: init?.method ?? "GET", url, authorization: headers.get("authorization"), body });
      const path = new URL(url).pathname;
      if (path === `/threads/${THREAD}/state`) return json(threadState);
      if (path === `/threads/${THREAD}/answer-schemas`) return json({ schemas: { "int-a": null } });
      if (path === `/threads/${THREAD}/stream/events`) return silentEventStream(init?.signal);
      if (path === `/threads/${THREAD}/commands`) return json(commandAnswer(body as { id: number }));
      if (path === `/audit/${THREAD}`) return json({ records: [] });
      return new Response("not found", { status: 404 });
    }),
  );
});

afterEach(() => {
  vi.unstubAllGlobals();
});

function mount() {
  return renderHook(() =>
    useApprovals({ apiUrl: API, token: "dev-reviewer1", assistantId: "records", threadId: THREAD }),
  );
}

describe("useApprovals over the real stream protocol", () => {
  it("a refusal sent as an HTTP 200 error envelope stays on the card with the server's message", async () => {
    commandAnswer = (command) => ({ type: "error", id: command.id, error: "permission_denied", message: REFUSAL });
    const { result, unmount } = mount();
    await waitFor(() => expect(result.current.pending.map((p) => p.id)).toEqual(["int-a"]));

    await act(() => result.current.approve({ interruptId: "int-a" }));

    const commands = seen.filter((s) => s.url.endsWith(`/threads/${THREAD}/commands`));
    expect(commands).toHaveLength(1);
    expect(commands[0]?.body).toMatchObject({
      method: "input.respond",
      params: { interrupt_id: "int-a", response: { type: "approve" } },
    });
    const card = result.current.pending.find((p) => p.id === "int-a");
    expect(card?.status).toEqual({ phase: "error", message: REFUSAL });
    expect(result.current.sent).toEqual([]);
    await waitFor(() => expect(result.current.streamError).toBeNull());
    unmount();
  });

  it("an answer the engine refuses because the run that asked is still ending is sent again, once it has", async () => {
    // the engine's words while the thread still holds the interrupts of before that run (nothing saved)
    const unsettled = "Unknown or already-consumed interrupt: int-a";
    let refusals = 1;
    commandAnswer = (command) =>
      refusals-- > 0
        ? { type: "error", id: command.id, error: "no_such_interrupt", message: unsettled }
        : { type: "success", id: command.id, result: {} };
    const { result, unmount } = mount();
    await waitFor(() => expect(result.current.pending.map((p) => p.id)).toEqual(["int-a"]));

    await act(() => result.current.approve({ interruptId: "int-a" }));

    const commands = seen.filter((s) => s.url.endsWith(`/threads/${THREAD}/commands`));
    expect(commands.map((c) => (c.body as { params: unknown }).params)).toEqual([
      expect.objectContaining({ interrupt_id: "int-a", response: { type: "approve" } }),
      expect.objectContaining({ interrupt_id: "int-a", response: { type: "approve" } }),
    ]);
    expect(result.current.pending).toEqual([]);
    expect(result.current.sent.map((s) => s.answer)).toEqual([{ type: "approve" }]);
    await waitFor(() => expect(result.current.streamError).toBeNull());
    unmount();
  });

  it("every request carries the bearer token, and an accepted answer leaves the pending list", async () => {
    const { result, unmount } = mount();
    await waitFor(() => expect(result.current.pending).toHaveLength(1));

    await act(() => result.current.reject({ interruptId: "int-a" }, "keep the file"));

    expect(result.current.pending).toEqual([]);
    expect(result.current.sent.map((s) => s.answer)).toEqual([{ type: "reject", message: "keep the file" }]);
    expect(seen.length).toBeGreaterThan(2);
    for (const request of seen) expect(request.authorization, request.url).toBe("Bearer dev-reviewer1");
    unmount();
  });
});
