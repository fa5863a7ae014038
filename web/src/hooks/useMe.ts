/** Who the signed-in token belongs to (`GET /me`), so the app offers each role its own pages. */
import { useEffect, useState } from "react";
import { getJson } from "../api/http";
import { isRecord } from "../interrupts/guards";

export interface Me {
  identity: string;
  role: string;
  /** Teams beyond the role ("finance"); empty when the server names none. */
  groups: string[];
}

export function isStaff(me: Me | null): boolean {
  return me?.role === "reviewer" || me?.role === "supervisor";
}

export function useMe(token: string | null): Me | null {
  const [me, setMe] = useState<Me | null>(null);
  useEffect(() => {
    setMe(null);
    if (!token) return;
    const abort = new AbortController();
    getJson("/me", token, { signal: abort.signal })
      .then((body) => {
        if (isRecord(body) && typeof body.identity === "string" && typeof body.role === "string") {
          const groups = Array.isArray(body.groups) ? body.groups.filter((g): g is string => typeof g === "string") : [];
          setMe({ identity: body.identity, role: body.role, groups });
        }
      })
      .catch(() => {
        // unknown role: the staff-only links stay hidden; the server refuses regardless
      });
    return () => abort.abort();
  }, [token]);
  return me;
}
