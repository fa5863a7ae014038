/** Dev users offered on the sign-in page, from `GET /app-config`; empty when it does not answer. */
import { useEffect, useState } from "react";
import { getJson } from "../api/http";
import type { DevUser } from "../contracts/generated";
import { isRecord } from "../interrupts/guards";

function isDevUser(value: unknown): value is DevUser {
  return (
    isRecord(value) &&
    typeof value.name === "string" &&
    typeof value.role === "string" &&
    typeof value.token === "string"
  );
}

export function useDevUsers(): DevUser[] {
  const [users, setUsers] = useState<DevUser[]>([]);
  useEffect(() => {
    const abort = new AbortController();
    getJson("/app-config", null, { signal: abort.signal })
      .then((body) => {
        const list = isRecord(body) && Array.isArray(body.dev_users) ? body.dev_users : [];
        setUsers(list.filter(isDevUser));
      })
      .catch(() => setUsers([]));
    return () => abort.abort();
  }, []);
  return users;
}
