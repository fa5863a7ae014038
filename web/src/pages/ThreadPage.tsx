/** One conversation: its messages, pending approvals (as cards, by shape) and resolved ones. */
import { useMemo, useState } from "react";
import { AuditPanel } from "../components/AuditPanel";
import { Composer } from "../components/Composer";
import { Conversation } from "../components/conversation/Conversation";
import { InterruptCard } from "../components/cards/InterruptCard";
import { ReceiptCard, SentCard } from "../components/cards/ResolvedCards";
import { apiUrl } from "../config";
import { useAgents, type AgentsView } from "../hooks/useAgents";
import { useApprovals } from "../hooks/useApprovals";
import type { Me } from "../hooks/useMe";
import { useThreadOwner } from "../hooks/useThreadOwner";
import { useReceiptVerification, verdictKey } from "../hooks/useReceiptVerification";
import { waitingOn } from "../hooks/pendingView";
import { receiptKey } from "../interrupts/receipts";
import { useThreadAssistant } from "../hooks/useThreadAssistant";
import { replaceHash, threadHref } from "../router";

interface ThreadPageProps {
  threadId: string | null;
  agent: string | null;
  token: string;
  /** Who is signed in (`GET /me`): a card offers its buttons only to someone who may decide. */
  me: Me | null;
}

export function ThreadPage({ threadId, agent, token, me }: ThreadPageProps) {
  const served = useAgents(token);
  const { assistantId, error } = useThreadAssistant(threadId, agent, served, token, apiUrl());
  if (error) {
    return (
      <div className="row">
        <p className="error" role="alert" data-testid="thread-error">
          {error}
        </p>
        {served.status === "failed" && error === served.error && (
          <button type="button" className="secondary" onClick={served.retry} data-testid="agents-retry">
            Try again
          </button>
        )}
      </div>
    );
  }
  if (!assistantId) {
    return (
      <p className="muted" data-testid="thread-opening">
        {threadId ? "Opening thread…" : "Reading the agents the server serves…"}
      </p>
    );
  }
  return <ThreadView key={assistantId} threadId={threadId} assistantId={assistantId} served={served} token={token} me={me} />;
}

interface ThreadViewProps {
  threadId: string | null;
  assistantId: string;
  served: AgentsView;
  token: string;
  me: Me | null;
}

function ThreadView({ threadId, assistantId, served, token, me }: ThreadViewProps) {
  const [startedHere] = useState(threadId === null);
  const approvals = useApprovals({
    apiUrl: apiUrl(),
    token,
    assistantId,
    threadId,
    onThreadId: (id) => replaceHash(threadHref(id, assistantId)),
  });
  const { pending, receipts, sent } = approvals;
  const waiting = useMemo(() => waitingOn(pending), [pending]);
  const verdicts = useReceiptVerification(approvals.threadId, token, apiUrl(), receipts.length);
  const owner = useThreadOwner(approvals.threadId, startedHere, me, token, apiUrl());

  return (
    <div className="thread" data-testid="thread-page" data-thread-id={approvals.threadId ?? ""}>
      <h2>
        {approvals.threadId ? (
          <>
            Thread <code data-testid="thread-id">{approvals.threadId}</code> · {assistantId}
          </>
        ) : (
          "New conversation"
        )}
        {approvals.runGoing && (
          <span className="muted" data-testid="run-active">
            {" "}
            · running…
          </span>
        )}
      </h2>
      {approvals.streamError && (
        <p className="error" role="alert" data-testid="stream-error">
          {approvals.streamError}
        </p>
      )}
      {approvals.isThreadLoading ? <p className="muted">Loading thread…</p> : (
        <Conversation
          messages={approvals.messages}
          receipts={receipts}
          waitingAgents={waiting.agents}
          waitingCalls={waiting.calls}
        />
      )}

      {pending.length > 0 && (
        <section className="pending-list" data-testid="pending-list">
          <h3>Waiting for a decision ({pending.length})</h3>
          {pending.map((item) => (
            <InterruptCard key={item.id} item={item} approvals={approvals} busy={approvals.runGoing} viewer={me} owner={owner} />
          ))}
        </section>
      )}

      {(receipts.length > 0 || sent.length > 0) && (
        <section className="resolved-list" data-testid="resolved-list">
          <h3>Decided</h3>
          {receipts.map((receipt) => (
            <ReceiptCard key={receiptKey(receipt)} receipt={receipt} verdict={verdicts.get(verdictKey(receipt))} />
          ))}
          {sent.map((item) => (
            <SentCard key={item.interruptId} sent={item} />
          ))}
        </section>
      )}

      {approvals.threadId && <AuditPanel records={approvals.auditTrail} available={approvals.auditAvailable} />}

      <Composer
        assistantId={assistantId}
        agents={served.status === "ready" ? served.agents : []}
        canChooseAssistant={!approvals.threadId}
        disabled={approvals.isLoading}
        onAssistantChange={(next) => replaceHash(threadHref(null, next))}
        onSend={(text) => void approvals.sendMessage(text)}
      />
    </div>
  );
}
