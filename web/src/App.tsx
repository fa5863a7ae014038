/** The reviewer app: sign-in gate, then the inbox, a thread or (for reviewers) the dashboard, by hash route. */
import { Suspense, lazy } from "react";
import { useSession } from "./auth/session";
import { AccountBadge } from "./components/AccountBadge";
import { isStaff, useMe } from "./hooks/useMe";
import { InboxPage } from "./pages/InboxPage";
import { SignInPage } from "./pages/SignInPage";
import { ThreadPage } from "./pages/ThreadPage";
import { threadHref, useRoute } from "./router";

// The dashboard and its chart library load only when it is opened (a chunk of its own).
const AnalyticsPage = lazy(() => import("./pages/AnalyticsPage").then((m) => ({ default: m.AnalyticsPage })));

export function App() {
  const session = useSession();
  const route = useRoute();
  const me = useMe(session.token);
  return (
    <div className="app">
      <header>
      <nav className="row" aria-label="Main">
        <a href="#/inbox" data-testid="nav-inbox">
          <strong>HITL reviewer</strong>
        </a>
        {session.token && (
          <>
            <a href={threadHref(null)} data-testid="nav-new">
              New conversation
            </a>
            {isStaff(me) && (
              <a href="#/analytics" data-testid="nav-analytics">
                Analytics
              </a>
            )}
            <span className="spacer" />
            <AccountBadge me={me} />
            <button type="button" className="secondary" onClick={session.signOut} data-testid="signout">
              Sign out
            </button>
          </>
        )}
      </nav>
      </header>
      <main>
        {!session.token ? (
          <SignInPage onSignIn={session.signIn} />
        ) : route.page === "analytics" ? (
          <Suspense fallback={<p className="muted">Loading…</p>}>
            <AnalyticsPage token={session.token} />
          </Suspense>
        ) : route.page === "thread" ? (
          <ThreadPage threadId={route.threadId} agent={route.agent} token={session.token} me={me} />
        ) : (
          <InboxPage token={session.token} />
        )}
      </main>
    </div>
  );
}
