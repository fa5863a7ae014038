import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Approvals, PendingApproval } from "../../hooks/useApprovals";
import { approvalRequest, batched, flightFormSchema, form, toolApproval } from "../../test/fixtures";
import { Conversation } from "../Conversation";
import { InterruptCard } from "./InterruptCard";

afterEach(cleanup);

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

function show(item: PendingApproval, busy = false) {
  const approvals = verbs();
  render(<InterruptCard item={item} approvals={approvals as unknown as Approvals} busy={busy} />);
  return approvals;
}

const base = { status: { phase: "idle" } as const, schemaLoading: false };

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
      })),
    });
    const actions = screen.getAllByTestId("action-card");
    expect(actions).toHaveLength(2);
    expect(within(actions[0]!).getByTestId("action-draft").textContent).toContain("approve");
    expect(within(actions[1]!).queryByTestId("decision-edit")).toBeNull();
    fireEvent.click(within(actions[1]!).getByTestId("decision-reject"));
    fireEvent.change(within(actions[1]!).getByTestId("reject-message"), { target: { value: "no email" } });
    fireEvent.click(within(actions[1]!).getByTestId("reject-confirm"));
    expect(approvals.reject).toHaveBeenCalledWith({ interruptId: "batch-1", actionIndex: 1 }, "no email");
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
    });
    expect(screen.getByTestId("card-agent").textContent).toContain("file_manager");
    fireEvent.click(screen.getByTestId("decision-edit"));
    const input = screen.getByLabelText(/Path/);
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
    });
    expect(screen.getByTestId("card-error").textContent).toBe("403: supervisor required");
    expect(screen.getByTestId("decision-approve")).not.toHaveProperty("disabled", true);
    cleanup();
    show({ ...base, status: { phase: "sending" }, kind: "approval_request", id: "ask-1", value: approvalRequest });
    expect(screen.getByTestId("approval-approve")).toHaveProperty("disabled", true);
    expect(screen.getByTestId("card-sending")).toBeTruthy();
  });

  it("form: rendered from its response_schema and submitted by interrupt id", async () => {
    const approvals = show({ ...base, kind: "form", id: "form-1", value: form, responseSchema: flightFormSchema });
    const card = screen.getByTestId("interrupt-card");
    expect(card.dataset.kind).toBe("form");
    fireEvent.change(screen.getByLabelText(/decision/), { target: { value: "0" } });
    fireEvent.change(screen.getByLabelText(/seat_class/), { target: { value: "2" } });
    fireEvent.click(screen.getByLabelText(/insurance/));
    fireEvent.click(screen.getByTestId("form-submit"));
    await waitFor(() =>
      expect(approvals.submit).toHaveBeenCalledWith("form-1", { decision: "approve", seat_class: "business", insurance: true }),
    );
  });

  it("approval request: approve or deny with a reason", () => {
    const approvals = show({ ...base, kind: "approval_request", id: "ask-1", value: approvalRequest });
    fireEvent.change(screen.getByTestId("approval-reason"), { target: { value: "change freeze" } });
    fireEvent.click(screen.getByTestId("approval-deny"));
    expect(approvals.submit).toHaveBeenCalledWith("ask-1", { approved: false, reason: "change freeze" });
  });
});

describe("conversation", () => {
  it("shows messages and each AI tool call's name and args", () => {
    render(
      <Conversation
        messages={[
          new HumanMessage({ content: "refund order A-1", id: "m1" }),
          new AIMessage({
            content: "",
            id: "m2",
            tool_calls: [{ id: "call_refund", name: "issue_refund", args: { order_id: "A-1", amount: 250 } }],
          }),
          new ToolMessage({ content: "refunded", tool_call_id: "call_refund", name: "issue_refund", id: "m3" }),
        ]}
      />,
    );
    expect(screen.getAllByTestId("message").map((m) => m.dataset.role)).toEqual(["human", "ai", "tool"]);
    const call = screen.getByTestId("tool-call");
    expect(call.dataset.tool).toBe("issue_refund");
    expect(call.textContent).toContain('"amount": 250');
  });
});
