/**
 * `useApprovals()` owns one thread's stream and every decision made on it. Components read
 * the view it returns and call its verbs (`approve`, `edit`, `reject`, `respond`, `submit`);
 * they never talk to the stream. Batched requests are answered once, in order, when every
 * action has a decision; per-call approvals, forms and approval requests by interrupt id.
 */
import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from "react";
import { useStream } from "@langchain/react";
import { describeError, isUnsettledInterrupt } from "../api/errors";
import { authHeaders } from "../api/http";
import type { ApprovalAnswer, ApprovalReceipt, AuditRecord, BatchedResponse, Decision } from "../contracts/generated";
import { classifyInterrupt, isRecord, type ClassifiedInterrupt, type JsonObject } from "../interrupts/guards";
import { acceptedRecords, isAnswered, mergeReceipts, receiptsFromValues } from "../interrupts/receipts";
import { useLasting } from "./useLasting";
import { IDLE, toPendingApproval, type CardStatus, type PendingApproval } from "./pendingView";
import { useAuditTrail } from "./useAuditTrail";
import { useInterruptSchemas } from "./useInterruptSchemas";

export type { ActionView, CardStatus, PendingApproval } from "./pendingView";

/** How long `isLoading` must hold before cards count the thread as running (see `useLasting`). */
export const RUN_SHOWS_AFTER_MS = 300;

/**
 * How long to wait before sending an answer again when the engine does not hold its interrupt yet
 * (`isUnsettledInterrupt`: the run that asked is still ending), once per entry; then the refusal shows.
 */
export const UNSETTLED_RETRY_MS = [250, 500, 1000, 2000, 4000];

/** A decision this tab sent and the server accepted, shown until its receipt arrives. */
export interface SentDecision {
  interruptId: string;
  kind: ClassifiedInterrupt["kind"];
  answer: Decision | BatchedResponse | ApprovalAnswer | JsonObject;
  sentAt: string;
}

export interface DecisionTarget {
  interruptId: string;
  /** Position of the action in a batched request; omitted for per-call approvals. */
  actionIndex?: number;
}

export interface UseApprovalsOptions {
  apiUrl: string;
  token: string;
  assistantId: string;
  threadId: string | null;
  onThreadId?: (threadId: string) => void;
}

export interface Approvals {
  threadId: string | null;
  messages: ReturnType<typeof useStream>["messages"];
  isLoading: boolean;
  /** A run is going on this thread: `isLoading` once it has held for `RUN_SHOWS_AFTER_MS` (`useLasting`). */
  runGoing: boolean;
  isThreadLoading: boolean;
  /** A stream failure not already shown on a card. */
  streamError: string | null;
  pending: PendingApproval[];
  receipts: ApprovalReceipt[];
  /** Resumes the server refused on this thread (from the audit trail), oldest first. */
  refusals: AuditRecord[];
  /** The thread's whole audit trail, oldest first (empty when the caller may not read it). */
  auditTrail: AuditRecord[];
  /** Whether `GET /audit/{thread_id}` answered (a requester reads only their own threads). */
  auditAvailable: boolean;
  sent: SentDecision[];
  sendMessage: (text: string) => Promise<void>;
  approve: (target: DecisionTarget) => Promise<void>;
  edit: (target: DecisionTarget, args: JsonObject) => Promise<void>;
  reject: (target: DecisionTarget, message?: string) => Promise<void>;
  respond: (target: DecisionTarget, message: string) => Promise<void>;
  /** Answers a form (data valid against its response_schema), an approval request or an MCP server's question. */
  submit: (interruptId: string, answer: JsonObject | ApprovalAnswer) => Promise<void>;
  /** Takes back a batched action's decision before the batch is sent. */
  undo: (target: DecisionTarget) => void;
}

function isApprovalAnswer(value: unknown): value is ApprovalAnswer {
  return isRecord(value) && typeof value.approved === "boolean" && typeof value.reason === "string";
}

export function useApprovals(options: UseApprovalsOptions): Approvals {
  const { apiUrl, token, assistantId, threadId } = options;

  // useStream rebuilds its client whenever these change identity: keep them stable.
  const defaultHeaders = useMemo(() => authHeaders(token), [token]);
  const onThreadIdRef = useRef(options.onThreadId);
  onThreadIdRef.current = options.onThreadId;
  const onThreadId = useCallback((id: string) => onThreadIdRef.current?.(id), []);

  const stream = useStream({ assistantId, apiUrl, defaultHeaders, threadId, onThreadId });
  const activeThreadId = stream.threadId ?? threadId;

  // A thread opened by id exists: read its trail at once. One started on this page exists on the server
  // only once its first run was put (the client names it first), so its trail is read when that run ended.
  const openedWith = useRef(threadId);
  const [ranHere, setRanHere] = useState(false);
  const audit = useAuditTrail(openedWith.current || ranHere ? activeThreadId : null, token, apiUrl);
  const receipts = useMemo(
    () => mergeReceipts(receiptsFromValues(stream.values), acceptedRecords(audit.records)),
    [stream.values, audit.records],
  );

  const [sent, setSent] = useState<SentDecision[]>([]);
  const [statuses, setStatuses] = useState<ReadonlyMap<string, CardStatus>>(new Map());
  const drafts = useRef(new Map<string, (Decision | undefined)[]>());
  const [draftsVersion, redraw] = useReducer((n: number) => n + 1, 0);
  const sending = useRef(new Set<string>());
  const cardErrors = useRef(new WeakSet<object>());

  useEffect(() => {
    setSent([]);
    setStatuses(new Map());
    drafts.current.clear();
  }, [activeThreadId]);

  // A sent decision hides its card until its receipt arrives; from then on the receipt decides.
  const sentIds = useMemo(
    () => new Set(sent.filter((s) => !receipts.some((r) => r.interrupt_id === s.interruptId)).map((s) => s.interruptId)),
    [sent, receipts],
  );
  const classified = useMemo(
    () =>
      stream.interrupts
        .map(classifyInterrupt)
        .filter((item): item is ClassifiedInterrupt => item !== null)
        .filter((item) => !isAnswered(item, receipts, sentIds)),
    [stream.interrupts, receipts, sentIds],
  );

  const schemaIds = classified
    .filter((c) => c.kind !== "approval_request" && c.kind !== "mcp_elicitation")
    .map((c) => c.id);
  const schemas = useInterruptSchemas(activeThreadId, token, apiUrl, schemaIds);

  const escalations = useMemo(
    () =>
      new Map(
        audit.records
          .filter((record) => record.decision === "escalated")
          .map((record) => [record.interrupt_id, record.decided_at] as const),
      ),
    [audit.records],
  );

  const pending = useMemo(
    () =>
      classified.map((item) =>
        toPendingApproval(item, {
          status: statuses.get(item.id) ?? IDLE,
          schema: schemas.get(item.id),
          schemaKnown: schemas.has(item.id),
          drafts: drafts.current.get(item.id),
          escalatedAt: escalations.get(item.id) ?? null,
        }),
      ),
    // drafts live in a ref; draftsVersion changes whenever they do
    [classified, schemas, statuses, draftsVersion, escalations],
  );

  const latest = useRef({ stream, pending });
  latest.current = { stream, pending };

  const setStatus = useCallback((id: string, status: CardStatus) => {
    setStatuses((prev) => new Map(prev).set(id, status));
  }, []);

  const refreshAudit = audit.refresh;
  const runGoing = useLasting(stream.isLoading, RUN_SHOWS_AFTER_MS);
  const wasLoading = useRef(stream.isLoading);
  useEffect(() => {
    if (wasLoading.current && !stream.isLoading) {
      setRanHere(true);
      refreshAudit();
    }
    wasLoading.current = stream.isLoading;
  }, [stream.isLoading, refreshAudit]);

  const send = useCallback(
    async (item: PendingApproval, answer: SentDecision["answer"]) => {
      if (sending.current.has(item.id)) return;
      sending.current.add(item.id);
      setStatus(item.id, { phase: "sending" });
      try {
        for (const wait of [...UNSETTLED_RETRY_MS, null]) {
          try {
            await latest.current.stream.respond(answer, { interruptId: item.id });
            break;
          } catch (error) {
            if (wait === null || !isUnsettledInterrupt(error)) throw error;
            if (isRecord(error)) cardErrors.current.add(error); // not the stream's failure: nothing to show
            await new Promise((resolve) => setTimeout(resolve, wait));
          }
        }
        setSent((prev) => [
          ...prev,
          { interruptId: item.id, kind: item.kind, answer, sentAt: new Date().toISOString() },
        ]);
        setStatus(item.id, IDLE);
        refreshAudit();
      } catch (error) {
        if (isRecord(error)) cardErrors.current.add(error);
        if (item.kind === "batched") drafts.current.delete(item.id);
        setStatus(item.id, { phase: "error", message: describeError(error) });
        refreshAudit(); // the server recorded the refused attempt
      } finally {
        sending.current.delete(item.id);
      }
    },
    [setStatus, refreshAudit],
  );

  const decide = useCallback(
    async (target: DecisionTarget, decision: Decision) => {
      const item = latest.current.pending.find((p) => p.id === target.interruptId);
      if (!item || sending.current.has(item.id)) return;
      if (item.kind === "batched") {
        const action = target.actionIndex === undefined ? undefined : item.actions[target.actionIndex];
        if (!action) return;
        if (!action.allowed.includes(decision.type)) {
          setStatus(item.id, { phase: "error", message: `${decision.type} is not allowed for ${action.request.name}` });
          return;
        }
        const collected = [...(drafts.current.get(item.id) ?? item.actions.map(() => undefined))];
        collected[action.index] = decision;
        drafts.current.set(item.id, collected);
        setStatus(item.id, IDLE);
        redraw();
        const complete = collected.filter((d): d is Decision => d !== undefined);
        if (complete.length === item.actions.length) await send(item, { decisions: complete });
        return;
      }
      if (item.kind === "tool_approval") {
        if (!item.allowed.includes(decision.type)) {
          setStatus(item.id, { phase: "error", message: `${decision.type} is not allowed for ${item.value.name}` });
          return;
        }
        await send(item, decision);
      }
    },
    [send, setStatus],
  );

  const toolName = useCallback((target: DecisionTarget): string | undefined => {
    const item = latest.current.pending.find((p) => p.id === target.interruptId);
    if (item?.kind === "batched") {
      return target.actionIndex === undefined ? undefined : item.actions[target.actionIndex]?.request.name;
    }
    return item?.kind === "tool_approval" ? item.value.name : undefined;
  }, []);

  const approve = useCallback((target: DecisionTarget) => decide(target, { type: "approve" }), [decide]);
  const reject = useCallback(
    (target: DecisionTarget, message?: string) =>
      decide(target, message ? { type: "reject", message } : { type: "reject" }),
    [decide],
  );
  const respond = useCallback(
    (target: DecisionTarget, message: string) => decide(target, { type: "respond", message }),
    [decide],
  );
  const edit = useCallback(
    async (target: DecisionTarget, args: JsonObject) => {
      const name = toolName(target);
      if (name !== undefined) await decide(target, { type: "edit", edited_action: { name, args } });
    },
    [decide, toolName],
  );

  const submit = useCallback(
    async (interruptId: string, answer: JsonObject | ApprovalAnswer) => {
      const item = latest.current.pending.find((p) => p.id === interruptId);
      if (!item) return;
      if (item.kind === "form" || item.kind === "mcp_elicitation") await send(item, answer);
      else if (item.kind === "approval_request" && isApprovalAnswer(answer)) await send(item, answer);
    },
    [send],
  );

  const undo = useCallback((target: DecisionTarget) => {
    const collected = drafts.current.get(target.interruptId);
    if (!collected || target.actionIndex === undefined || sending.current.has(target.interruptId)) return;
    collected[target.actionIndex] = undefined;
    redraw();
  }, []);

  const sendMessage = useCallback(async (text: string) => {
    const content = text.trim();
    if (!content) return;
    await latest.current.stream.submit({ messages: [{ type: "human", content }] });
  }, []);

  const error: unknown = stream.error;
  const streamError =
    error === undefined || error === null || (isRecord(error) && cardErrors.current.has(error))
      ? null
      : describeError(error);

  return {
    threadId: activeThreadId,
    messages: stream.messages,
    isLoading: stream.isLoading,
    runGoing,
    isThreadLoading: stream.isThreadLoading,
    streamError,
    pending,
    receipts,
    refusals: audit.records.filter((record) => record.outcome === "refused"),
    auditTrail: audit.records,
    auditAvailable: audit.available,
    sent: sent.filter((s) => !receipts.some((r) => r.interrupt_id === s.interruptId)),
    sendMessage,
    approve,
    edit,
    reject,
    respond,
    submit,
    undo,
  };
}
