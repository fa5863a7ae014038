import { act, renderHook, waitFor } from "@testing-library/react";
import { ProtocolError } from "@langchain/langgraph-sdk";
import { useStream } from "@langchain/react";
import { afterEach, beforeEach, describe, expect, it, vi, type Mock } from "vitest";
import {
  approvalRequest,
  auditRecord,
  batched,
  formSchema,
  form,
  perCallSchema,
  receipt,
  toolApproval,
} from "../test/fixtures";
import { useApprovals, type PendingApproval } from "./useApprovals";

vi.mock("@langchain/react", () => ({ useStream: vi.fn() }));

type Stream = ReturnType<typeof useStream>;

interface FakeStreamInit {
  interrupts: { id: string; value: unknown }[];
  values?: Record<string, unknown>;
  error?: unknown;
}

type Respond = Mock<(answer: unknown, options?: { interruptId?: string }) => Promise<void>>;
const makeRespond = (impl: () => Promise<void> = async () => {}): Respond => vi.fn(impl);

function fakeStream(init: FakeStreamInit, respond: Respond = makeRespond()) {
  return {
    interrupts: init.interrupts,
    interrupt: init.interrupts[0],
    values: init.values ?? {},
    messages: [],
    toolCalls: [],
    isLoading: false,
    isThreadLoading: false,
    error: init.error,
    threadId: "thread-1",
    respond,
    respondAll: vi.fn(),
    submit: vi.fn(async () => {}),
  };
}

let current: ReturnType<typeof fakeStream>;
let stateBody: unknown;
let auditBody: unknown;

function use(init: FakeStreamInit, respond?: Respond) {
  current = fakeStream(init, respond);
  vi.mocked(useStream).mockImplementation(() => current as unknown as Stream);
  return renderHook(() =>
    useApprovals({ apiUrl: "http://api.test", token: "dev-reviewer1", assistantId: "records", threadId: "thread-1" }),
  );
}

const byId = (pending: PendingApproval[], id: string) => pending.find((p) => p.id === id);

beforeEach(() => {
  stateBody = { schemas: {} };
  auditBody = { records: [] };
  vi.stubGlobal(
    "fetch",
    vi.fn(async (url: string) => {
      const body = url.includes("/audit/") ? auditBody : url.includes("/answer-schemas") ? stateBody : {};
      return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
    }),
  );
});

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("batched approvals", () => {
  it("collects one decision per action and sends them once, in action order, when all are made", async () => {
    const respond = makeRespond();
    const { result } = use({ interrupts: [{ id: "batch-1", value: batched }] }, respond);

    await act(() => result.current.approve({ interruptId: "batch-1", actionIndex: 1 }));
    expect(respond).not.toHaveBeenCalled();
    const item = byId(result.current.pending, "batch-1");
    expect(item?.kind === "batched" && item.actions.map((a) => a.draft?.type)).toEqual([undefined, "approve"]);

    await act(() => result.current.edit({ interruptId: "batch-1", actionIndex: 0 }, { invoice_id: "INV-1", amount: 200 }));
    expect(respond).toHaveBeenCalledTimes(1);
    expect(respond).toHaveBeenCalledWith(
      {
        decisions: [
          { type: "edit", edited_action: { name: "pay_invoice", args: { invoice_id: "INV-1", amount: 200 } } },
          { type: "approve" },
        ],
      },
      { interruptId: "batch-1" },
    );
    expect(byId(result.current.pending, "batch-1")).toBeUndefined();
    expect(result.current.sent.map((s) => s.interruptId)).toEqual(["batch-1"]);

    await act(() => result.current.approve({ interruptId: "batch-1", actionIndex: 0 }));
    expect(respond).toHaveBeenCalledTimes(1);
  });

  it("refuses a decision the action does not allow, and undo takes one back", async () => {
    const respond = makeRespond();
    const { result } = use({ interrupts: [{ id: "batch-1", value: batched }] }, respond);

    await act(() => result.current.respond({ interruptId: "batch-1", actionIndex: 1 }, "hello"));
    let item = byId(result.current.pending, "batch-1");
    expect(item?.status).toEqual({ phase: "error", message: "respond is not allowed for send_reminder" });

    await act(() => result.current.reject({ interruptId: "batch-1", actionIndex: 0 }, "too much"));
    act(() => result.current.undo({ interruptId: "batch-1", actionIndex: 0 }));
    await act(() => result.current.approve({ interruptId: "batch-1", actionIndex: 1 }));
    expect(respond).not.toHaveBeenCalled();
    item = byId(result.current.pending, "batch-1");
    expect(item?.kind === "batched" && item.actions.map((a) => a.draft?.type)).toEqual([undefined, "approve"]);

    await act(() => result.current.reject({ interruptId: "batch-1", actionIndex: 0 }, "too much"));
    expect(respond).toHaveBeenCalledWith(
      { decisions: [{ type: "reject", message: "too much" }, { type: "approve" }] },
      { interruptId: "batch-1" },
    );
  });
});

describe("per-call approvals, forms and approval requests", () => {
  it("answers each interrupt on its own, by its id", async () => {
    const respond = makeRespond();
    const other = { ...toolApproval, tool_call_id: "call_other", args: { path: "b.csv" } };
    const { result } = use({ interrupts: [{ id: "int-a", value: toolApproval }, { id: "int-b", value: other }] }, respond);

    await act(() => result.current.reject({ interruptId: "int-b" }, "keep it"));
    expect(respond).toHaveBeenCalledTimes(1);
    expect(respond).toHaveBeenLastCalledWith({ type: "reject", message: "keep it" }, { interruptId: "int-b" });
    expect(result.current.pending.map((p) => p.id)).toEqual(["int-a"]);

    await act(() => result.current.edit({ interruptId: "int-a" }, { path: "reports/older.csv" }));
    expect(respond).toHaveBeenLastCalledWith(
      { type: "edit", edited_action: { name: "archive_file", args: { path: "reports/older.csv" } } },
      { interruptId: "int-a" },
    );
    expect(result.current.pending).toEqual([]);
  });

  it("reads each interrupt's full answer schema from the server for the edit form and the form card", async () => {
    stateBody = { schemas: { "int-a": perCallSchema, "form-1": formSchema, "ask-1": null } };
    const respond = makeRespond();
    const { result } = use(
      { interrupts: [{ id: "int-a", value: toolApproval }, { id: "form-1", value: form }, { id: "ask-1", value: approvalRequest }] },
      respond,
    );
    await waitFor(() => expect(byId(result.current.pending, "form-1")?.schemaLoading).toBe(false));
    const perCall = byId(result.current.pending, "int-a");
    expect(perCall?.kind === "tool_approval" && perCall.editArgsSchema?.required).toEqual(["path"]);
    const formItem = byId(result.current.pending, "form-1");
    expect(formItem?.kind === "form" && formItem.responseSchema).toEqual(formSchema);

    const answer = { decision: "approve", terms: "net-30", reminder: true };
    await act(() => result.current.submit("form-1", answer));
    expect(respond).toHaveBeenLastCalledWith(answer, { interruptId: "form-1" });
    await act(() => result.current.submit("ask-1", { approved: false, reason: "freeze" }));
    expect(respond).toHaveBeenLastCalledWith({ approved: false, reason: "freeze" }, { interruptId: "ask-1" });
    expect(result.current.pending.map((p) => p.id)).toEqual(["int-a"]);
  });
});

describe("refusals and resolved approvals", () => {
  it("a refused resume (error envelope) keeps the card, shows the server's message, and allows a new try", async () => {
    const envelope = { type: "error" as const, id: 3, error: "permission_denied" as const, message: "403: supervisor required for payments over 500" };
    const refusal = new ProtocolError(envelope);
    const respond = makeRespond(async () => {
      // the server records the refused attempt before it answers
      auditBody = {
        records: [auditRecord({ interrupt_id: "batch-1", outcome: "refused", decision: "refused", refusal: envelope.message })],
      };
      throw refusal;
    });
    const { result, rerender } = use({ interrupts: [{ id: "batch-1", value: batched }] }, respond);

    await act(() => result.current.approve({ interruptId: "batch-1", actionIndex: 0 }));
    await act(() => result.current.approve({ interruptId: "batch-1", actionIndex: 1 }));
    expect(respond).toHaveBeenCalledTimes(1);
    const item = byId(result.current.pending, "batch-1");
    expect(item?.status).toEqual({ phase: "error", message: envelope.message });
    expect(item?.kind === "batched" && item.actions.every((a) => a.draft === undefined)).toBe(true);
    expect(result.current.sent).toEqual([]);
    // the audit trail is read again, so the refused attempt is listed without a reload
    await waitFor(() => expect(result.current.refusals.map((r) => r.refusal)).toEqual([envelope.message]));

    // the SDK also puts the refusal on stream.error: it is shown once, on the card
    current = { ...current, error: refusal };
    rerender();
    expect(result.current.streamError).toBeNull();

    respond.mockImplementation(async () => {});
    await act(() => result.current.reject({ interruptId: "batch-1", actionIndex: 0 }));
    await act(() => result.current.approve({ interruptId: "batch-1", actionIndex: 1 }));
    expect(respond).toHaveBeenCalledTimes(2);
    expect(byId(result.current.pending, "batch-1")).toBeUndefined();
  });

  it("disables a card while its decision is in flight and never sends it twice", async () => {
    let release = () => {};
    const respond = makeRespond(() => new Promise<void>((resolve) => (release = resolve)));
    const { result } = use({ interrupts: [{ id: "int-a", value: toolApproval }] }, respond);

    let first: Promise<void> = Promise.resolve();
    act(() => {
      first = result.current.approve({ interruptId: "int-a" });
    });
    expect(byId(result.current.pending, "int-a")?.status).toEqual({ phase: "sending" });
    await act(() => result.current.reject({ interruptId: "int-a" }));
    expect(respond).toHaveBeenCalledTimes(1);
    await act(async () => {
      release();
      await first;
    });
    expect(byId(result.current.pending, "int-a")).toBeUndefined();
  });

  it("an interrupt with a receipt (thread state or accepted audit record) is decided, never pending; a refusal is not a receipt", async () => {
    const { result } = use({
      interrupts: [
        { id: "int-a", value: toolApproval },
        { id: "batch-1", value: batched },
        { id: "form-1", value: form },
      ],
      values: { approval_receipts: [receipt({ interrupt_id: "int-a" }), { interrupt_id: "broken" }] },
    });
    expect(result.current.pending.map((p) => p.id)).toEqual(["batch-1", "form-1"]);
    expect(result.current.receipts.map((r) => r.interrupt_id)).toEqual(["int-a"]);

    auditBody = {
      records: [
        auditRecord({ interrupt_id: "form-1", outcome: "refused", decision: "refused", refusal: "403: owner only" }),
        auditRecord({ interrupt_id: "batch-1", tool_call_id: "call_pay", tool: "pay_invoice" }),
      ],
    };
    const late = use({ interrupts: current.interrupts, values: current.values });
    await waitFor(() => expect(late.result.current.pending.map((p) => p.id)).toEqual(["form-1"]));
    expect(late.result.current.receipts.map((r) => r.interrupt_id).sort()).toEqual(["batch-1", "int-a"]);
    expect(late.result.current.refusals.map((r) => r.interrupt_id)).toEqual(["form-1"]);
  });
});
