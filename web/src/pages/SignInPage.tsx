/** Sign in with a bearer token; in dev mode, one click on a dev user. */
import { useState } from "react";
import { useDevUsers } from "../auth/useDevUsers";

export function SignInPage({ onSignIn }: { onSignIn: (token: string) => void }) {
  const devUsers = useDevUsers();
  const [token, setToken] = useState("");
  return (
    <div className="signin" data-testid="signin-page">
      <h2>Sign in</h2>
      <form
        className="row"
        onSubmit={(event) => {
          event.preventDefault();
          onSignIn(token);
        }}
      >
        <input
          type="password"
          data-testid="signin-token"
          placeholder="Bearer token"
          autoComplete="off"
          value={token}
          onChange={(event) => setToken(event.target.value)}
        />
        <button type="submit" className="primary" disabled={!token.trim()} data-testid="signin-submit">
          Sign in
        </button>
      </form>
      {devUsers.length > 0 && (
        <div className="dev-users" data-testid="dev-users">
          <h3>Dev users</h3>
          {devUsers.map((user) => (
            <button
              key={user.token}
              type="button"
              className="secondary"
              data-testid={`dev-user-${user.name}`}
              onClick={() => onSignIn(user.token)}
            >
              {user.name} <span className="muted">({user.role})</span>
            </button>
          ))}
        </div>
      )}
    </div>
  );
}
