/** The reviewer app: sign-in gate, then the inbox or a thread, by hash route. */
import { useSession } from "./auth/session";
import { InboxPage } from "./pages/InboxPage";
import { SignInPage } from "./pages/SignInPage";
import { ThreadPage } from "./pages/ThreadPage";
import { useRoute } from "./router";

export function App() {
  const session = useSession();
  const route = useRoute();
  return (
    <div className="app">
      <nav className="row">
        <a href="#/inbox" data-testid="nav-inbox">
          <strong>HITL reviewer</strong>
        </a>
        {session.token && (
          <>
            <a href="#/threads/new?agent=support" data-testid="nav-new">
              New conversation
            </a>
            <span className="spacer" />
            <button type="button" className="secondary" onClick={session.signOut} data-testid="signout">
              Sign out
            </button>
          </>
        )}
      </nav>
      <main>
        {!session.token ? (
          <SignInPage onSignIn={session.signIn} />
        ) : route.page === "thread" ? (
          <ThreadPage threadId={route.threadId} agent={route.agent} token={session.token} />
        ) : (
          <InboxPage token={session.token} />
        )}
      </main>
    </div>
  );
}
