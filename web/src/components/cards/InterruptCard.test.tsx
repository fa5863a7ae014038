import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { createRoot } from "react-dom/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Approvals, PendingApproval } from "../../hooks/useApprovals";
import { OWNER_ANSWERS, type DeciderRule, type Viewer } from "../../present/deciders";
import { approvalRequest, batched, mcpQuestion, receipt, form, formSchema, toolApproval } from "../../test/fixtures";
import { Conversation } from "../conversation/Conversation";
import { InterruptCard } from "./InterruptCard";

afterEach(cleanup);

const auditFree = receipt();

function verbs() {
  return {
    approve: vi.fn(async () => {}),
    edit: vi.fn(async () => {}),
    reject: vi.fn(async () => {}),
    respond: vi.fn(async () => {}),
    submit: vi.fn(async () => {}),
    undo: vi.fn(),
  };
}

/** A supervisor, who owns the thread too: every card offers them its buttons. */
const SAM: Viewer = { identity: "sam", role: "supervisor", decides_as: ["reviewer", "supervisor"] };

function show(item: PendingApproval, busy = false, viewer: Viewer | null = SAM, owner: string | null = "sam") {
  const approvals = verbs();
  render(<InterruptCard item={item} approvals={approvals as unknown as Approvals} busy={busy} viewer={viewer} owner={owner} />);
  return approvals;
}

const REVIEWERS: DeciderRule = { requiredRole: "reviewer", requestedBy: ["ana"], selfApproval: false, approvedBy: [] };
const noDeadline = { deadline: null, onExpiry: null, escalated: false, escalatesTo: null };
const base = { status: { phase: "idle" } as const, schemaLoading: false, deadline: noDeadline, decider: REVIEWERS };

describe("pending interrupt cards", () => {
  it("batched: one card per action, buttons only for allowed decisions, targets carry the action index", () => {
    const approvals = show({
      ...base,
      kind: "batched",
      id: "batch-1",
      value: batched,
      actions: batched.action_requests.map((request, index) => ({
        index,
        request,
        allowed: batched.review_configs[index]?.allowed_decisions ?? [],
        requiredRole: "reviewer",
        editArgsSchema: null,
        draft: index === 0 ? { type: "approve" } : undefined,
        quorum: index === 0 ? { required: 2, approvedBy: ["bo"] } : null,
        decider: REVIEWERS,
      })),
    });
    const actions = screen.getAllByTestId("action-card");
    expect(actions).toHaveLength(2);
    expect(within(actions[0]!).getByTestId("quorum").textContent).toBe("1 of 2 approvals · approved by bo");
    expect(within(actions[1]!).queryByTestId("quorum")).toBeNull();
    expect(within(actions[0]!).getByTestId("action-draft").textContent).toContain("approve");
    expect(within(actions[1]!).queryByTestId("decision-edit")).toBeNull();
    fireEvent.click(within(actions[1]!).getByTestId("decision-reject"));
    fireEvent.change(within(actions[1]!).getByTestId("reject-message"), { target: { value: "no reminder" } });
    fireEvent.click(within(actions[1]!).getByTestId("reject-confirm"));
    expect(approvals.reject).toHaveBeenCalledWith({ interruptId: "batch-1", actionIndex: 1 }, "no reminder");
    fireEvent.click(within(actions[0]!).getByTestId("action-undo"));
    expect(approvals.undo).toHaveBeenCalledWith({ interruptId: "batch-1", actionIndex: 0 });
  });

  it("per-call: the edit form is generated from the args schema and sends the edited args", async () => {
    const approvals = show({
      ...base,
      kind: "tool_approval",
      id: "int-a",
      value: toolApproval,
      allowed: ["approve", "edit", "reject"],
      editArgsSchema: { type: "object", properties: { path: { type: "string", title: "Path" } }, required: ["path"] },
      quorum: null,
    });
    expect(screen.getByTestId("card-agent").textContent).toContain("archivist");
    fireEvent.click(screen.getByTestId("decision-edit"));
    const input = await screen.findByLabelText(/Path/); // the form's code loads on first use
    fireEvent.change(input, { target: { value: "reports/older.csv" } });
    fireEvent.click(screen.getByTestId("edit-save"));
    await waitFor(() => expect(approvals.edit).toHaveBeenCalledWith({ interruptId: "int-a" }, { path: "reports/older.csv" }));
  });

  it("a card in error shows the server's message; a sending or busy card is disabled", () => {
    show({
      ...base,
      status: { phase: "error", message: "403: supervisor required" },
      kind: "tool_approval",
      id: "int-a",
      value: toolApproval,
      allowed: ["approve", "reject"],
      editArgsSchema: null,
      quorum: null,
    });
    expect(screen.getByTestId("card-error").textContent).toBe("403: supervisor required");
    expect(screen.getByTestId("decision-approve")).not.toHaveProperty("disabled", true);
    cleanup();
    show({ ...base, status: { phase: "sending" }, kind: "approval_request", id: "ask-1", value: approvalRequest });
    expect(screen.getByTestId("approval-approve")).toHaveProperty("disabled", true);
    expect(screen.getByTestId("card-sending")).toBeTruthy();
  });

  it("form: rendered from its response_schema and submitted by interrupt id", async () => {
    const approvals = show({ ...base, kind: "form", id: "form-1", value: form, responseSchema: formSchema, decider: OWNER_ANSWERS });
    const card = screen.getByTestId("interrupt-card");
    expect(card.dataset.kind).toBe("form");
    fireEvent.change(await screen.findByLabelText(/decision/), { target: { value: "0" } });
    fireEvent.change(screen.getByLabelText(/terms/), { target: { value: "2" } });
    fireEvent.click(screen.getByLabelText(/reminder/));
    fireEvent.click(screen.getByTestId("form-submit"));
    await waitFor(() =>
      expect(approvals.submit).toHaveBeenCalledWith("form-1", { decision: "approve", terms: "net-60", reminder: true }),
    );
  });

  it("mcp question: the server's words as text, its fields as a form, accept/decline/cancel by interrupt id", async () => {
    const approvals = show({ ...base, kind: "mcp_elicitation", id: "q-1", value: mcpQuestion, decider: OWNER_ANSWERS });
    const card = screen.getByTestId("interrupt-card");
    expect(card.dataset.kind).toBe("mcp_elicitation");
    expect(within(card).getByRole("heading").textContent).toBe("crm.close_account asks");
    expect(screen.getByTestId("mcp-question").textContent).toBe(mcpQuestion.message);
    expect(card.querySelector("b, script")).toBeNull();
    fireEvent.change(await screen.findByLabelText(/Reason/), { target: { value: "Moved away" } });
    fireEvent.click(screen.getByTestId("mcp-accept"));
    await waitFor(() =>
      expect(approvals.submit).toHaveBeenCalledWith("q-1", { action: "accept", content: { reason: "Moved away" } }),
    );
    fireEvent.click(screen.getByTestId("mcp-decline"));
    fireEvent.click(screen.getByTestId("mcp-cancel"));
    expect(approvals.submit).toHaveBeenCalledWith("q-1", { action: "decline" });
    expect(approvals.submit).toHaveBeenCalledWith("q-1", { action: "cancel" });
  });

  it("mcp question in url mode: the link shown, Done confirms; someone else only reads who answers", () => {
    const link = { ...mcpQuestion, mode: "url" as const, url: "https://example.com/consent", requested_schema: undefined };
    const approvals = show({ ...base, kind: "mcp_elicitation", id: "q-2", value: link, decider: OWNER_ANSWERS });
    const anchor = screen.getByTestId("mcp-link") as HTMLAnchorElement;
    expect(anchor.rel).toBe("noopener noreferrer nofollow");
    expect(anchor.href).toBe("https://example.com/consent");
    fireEvent.click(screen.getByTestId("mcp-accept"));
    expect(approvals.submit).toHaveBeenCalledWith("q-2", { action: "accept" });
    cleanup();
    show({ ...base, kind: "mcp_elicitation", id: "q-3", value: link, decider: OWNER_ANSWERS }, false, SAM, "ana");
    expect(screen.queryByTestId("mcp-accept")).toBeNull();
    expect(screen.getByTestId("interrupt-card").textContent).toContain("ana, whose thread this is, answers this");
  });

  it("approval request: approve or deny with a reason", () => {
    const approvals = show({ ...base, kind: "approval_request", id: "ask-1", value: approvalRequest });
    fireEvent.change(screen.getByTestId("approval-reason"), { target: { value: "change freeze" } });
    fireEvent.click(screen.getByTestId("approval-deny"));
    expect(approvals.submit).toHaveBeenCalledWith("ask-1", { approved: false, reason: "change freeze" });
  });
});

describe("who may decide", () => {
  const perCall = (decider: DeciderRule): PendingApproval => ({
    ...base,
    kind: "tool_approval",
    id: "int-w",
    value: toolApproval,
    allowed: ["approve", "reject"],
    editArgsSchema: null,
    quorum: null,
    decider,
  });
  const note = () => screen.getByTestId("decider-note").textContent;

  it("a reviewer sees no buttons on a call a supervisor decides, and is told who does", () => {
    show(perCall({ ...REVIEWERS, requiredRole: "supervisor" }), false, { identity: "rita", role: "reviewer", decides_as: ["reviewer"] });
    expect(screen.queryByTestId("decision-approve")).toBeNull();
    expect(note()).toBe("A supervisor decides this, not ana who asked. You are signed in as rita (reviewer).");
  });

  it("the person who asked sees no buttons (four eyes), unless the gate allows self-approval", () => {
    show(perCall(REVIEWERS), false, { identity: "ana", role: "reviewer", decides_as: ["reviewer"] });
    expect(screen.queryByTestId("decision-approve")).toBeNull();
    expect(note()).toContain("You asked for it, so someone else decides it (four eyes).");
    cleanup();
    show(perCall({ ...REVIEWERS, selfApproval: true }), false, { identity: "ana", role: "reviewer", decides_as: ["reviewer"] });
    expect(screen.getByTestId("decision-approve")).toBeTruthy();
  });

  it("a quorum's approver sees no second approve; no one sees buttons before the app knows who they are", () => {
    show(perCall({ ...REVIEWERS, approvedBy: ["sam"] }));
    expect(note()).toContain("You approved it already");
    cleanup();
    show(perCall(REVIEWERS), false, null);
    expect(screen.queryByTestId("decision-approve")).toBeNull();
    expect(note()).toContain("Checking who you are");
  });

  it("a form is answered by the thread's owner only: others read its context and who answers", () => {
    show({ ...base, kind: "form", id: "form-w", value: form, responseSchema: formSchema, decider: OWNER_ANSWERS }, false, SAM, "ana");
    expect(screen.queryByTestId("form-submit")).toBeNull();
    expect(screen.getByTestId("form-context")).toBeTruthy();
    expect(note()).toBe("ana, whose thread this is, answers this. Only the thread's owner answers it.");
  });

  it("a sign-off's asker sees no approve or deny; in a batch, each action says it for itself", () => {
    show({ ...base, kind: "approval_request", id: "ask-w", value: approvalRequest }, false, { identity: "ana", role: "supervisor", decides_as: ["reviewer", "supervisor"] });
    expect(screen.queryByTestId("approval-approve")).toBeNull();
    expect(note()).toContain("four eyes");
    cleanup();
    show({
      ...base,
      kind: "batched",
      id: "batch-w",
      value: batched,
      actions: batched.action_requests.map((request, index) => ({
        index,
        request,
        allowed: ["approve", "reject"],
        requiredRole: index === 0 ? "supervisor" : "reviewer",
        editArgsSchema: null,
        draft: undefined,
        quorum: null,
        decider: { ...REVIEWERS, requiredRole: index === 0 ? "supervisor" : "reviewer" },
      })),
    }, false, { identity: "rita", role: "reviewer", decides_as: ["reviewer"] });
    const [first, second] = screen.getAllByTestId("action-card");
    expect(within(first!).queryByTestId("decision-approve")).toBeNull();
    expect(within(first!).getByTestId("decider-note").textContent).toContain("A supervisor decides this");
    expect(within(second!).getByTestId("decision-approve")).toBeTruthy();
  });
});

describe("card keys", () => {
  const perCall = (id: string): PendingApproval => ({
    ...base,
    kind: "tool_approval",
    id,
    value: toolApproval,
    allowed: ["approve", "edit", "reject"],
    editArgsSchema: null,
    quorum: null,
  });

  it("a approves the first card; r opens the reason box; keys typed in a field are text", () => {
    const approvals = show(perCall("int-k"));
    fireEvent.keyDown(document.body, { key: "a" });
    expect(approvals.approve).toHaveBeenCalledWith({ interruptId: "int-k" });
    fireEvent.keyDown(document.body, { key: "r" });
    const reason = screen.getByTestId("reject-message");
    expect(document.activeElement).toBe(reason);
    fireEvent.keyDown(reason, { key: "a" });
    expect(approvals.approve).toHaveBeenCalledTimes(1);
  });

  it("on a sign-off, r goes to the reason box and a approves", () => {
    const approvals = show({ ...base, kind: "approval_request", id: "ask-k", value: approvalRequest });
    fireEvent.keyDown(document.body, { key: "r" });
    expect(document.activeElement).toBe(screen.getByTestId("approval-reason"));
    (document.activeElement as HTMLElement).blur();
    fireEvent.keyDown(document.body, { key: "a" });
    expect(approvals.submit).toHaveBeenCalledWith("ask-k", { approved: true, reason: "" });
  });

  it("e opens the edit form", () => {
    show(perCall("int-e"));
    fireEvent.keyDown(document.body, { key: "e" });
    expect(screen.getByTestId("edit-args-json")).toBeTruthy();
  });

  it("a key pressed as soon as the buttons show is not lost (the listener comes with the commit)", async () => {
    // as in the browser: the card arrives with a network update, outside act(), and a person (or a
    // test) presses the key the moment the DOM shows it, before React's passive effects have run
    const env = globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean };
    const actEnvironment = env.IS_REACT_ACT_ENVIRONMENT;
    env.IS_REACT_ACT_ENVIRONMENT = false;
    const host = document.body.appendChild(document.createElement("div"));
    const root = createRoot(host);
    const approvals = verbs();
    try {
      const pressed = new Promise<void>((resolve) => {
        const observer = new MutationObserver(() => {
          if (!host.querySelector('[data-testid="decision-approve"]')) return;
          observer.disconnect();
          fireEvent.keyDown(document.body, { key: "a" });
          resolve();
        });
        observer.observe(host, { childList: true, subtree: true });
      });
      root.render(
        <InterruptCard item={perCall("int-now")} approvals={approvals as unknown as Approvals} busy={false} viewer={SAM} owner="sam" />,
      );
      await pressed;
      expect(approvals.approve).toHaveBeenCalledWith({ interruptId: "int-now" });
    } finally {
      root.unmount();
      host.remove();
      env.IS_REACT_ACT_ENVIRONMENT = actEnvironment;
    }
  });
});

describe("conversation", () => {
  it("AI text is Markdown without raw HTML; a tool call is one line with its result, open for the args", () => {
    const { container } = render(
      <Conversation
        messages={[
          new HumanMessage({ content: "pay invoice INV-1", id: "m1" }),
          new AIMessage({
            content: "Paying **250** now <img src=x onerror=alert(1)>",
            id: "m2",
            tool_calls: [{ id: "call_pay", name: "pay_invoice", args: { invoice_id: "INV-1", amount: 250 } }],
          }),
          new ToolMessage({ content: '{"paid": 250}', tool_call_id: "call_pay", name: "pay_invoice", id: "m3" }),
        ]}
      />,
    );
    expect(screen.getAllByTestId("message").map((m) => m.dataset.role)).toEqual(["human", "ai"]);
    expect(container.querySelector(".markdown strong")?.textContent).toBe("250");
    expect(container.querySelector("img")).toBeNull();
    const call = screen.getByTestId("tool-call");
    expect(call.dataset.tool).toBe("pay_invoice");
    expect(call.querySelector("summary")?.textContent).toBe("pay_invoice invoice_id INV-1, amount 250 → paid 250");
    expect(call.hasAttribute("open")).toBe(false);
    expect(within(call).getByTestId("tool-call-args").textContent).toContain("Invoice ID");
    expect(within(call).getByTestId("tool-result").textContent).toContain('"paid": 250');
  });

  it("a subagent's task, its decisions and its report are grouped under the subagent", () => {
    render(
      <Conversation
        messages={[
          new AIMessage({
            content: "",
            id: "m1",
            tool_calls: [
              { id: "call_task", name: "task", args: { description: "Pay 59 on INV-2", subagent_type: "payments_specialist" } },
            ],
          }),
          new ToolMessage({ content: "The payments specialist reports: done", tool_call_id: "call_task", name: "task", id: "m2" }),
        ]}
        receipts={[{ ...auditFree, agent: "payments_specialist", tool: "pay_invoice", decision: "approve", reviewer: "reviewer1" }]}
      />,
    );
    const group = screen.getByTestId("subagent-task");
    expect(group.dataset.subagent).toBe("payments_specialist");
    expect(group.dataset.status).toBe("done");
    expect(group.textContent).toContain("Pay 59 on INV-2");
    expect(within(group).getByTestId("subagent-decision").textContent).toBe("pay_invoice: approve by reviewer1");
    expect(within(group).getByTestId("tool-result").textContent).toContain("payments specialist reports");
  });
});
