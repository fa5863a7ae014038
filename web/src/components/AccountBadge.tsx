/** Who is signed in and as what role, in the header beside the sign-out button. */
import type { Me } from "../hooks/useMe";

export function AccountBadge({ me }: { me: Me | null }) {
  if (!me) return <span className="muted" data-testid="signed-in-as">Signed in</span>;
  return (
    <span className="account" data-testid="signed-in-as">
      Signed in as <strong data-testid="signed-in-user">{me.identity}</strong>{" "}
      <span className="role" data-testid="signed-in-role">
        {me.role}
      </span>
    </span>
  );
}
