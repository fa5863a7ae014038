/**
 * Who the signed-in token belongs to (`GET /me`, the contract's `Me`): the app offers staff their pages,
 * and a card its buttons to whoever is in the group that decides it (`decides_as`).
 */
import { useEffect, useState } from "react";
import { getJson } from "../api/http";
import type { Me } from "../contracts/generated";
import { isMe } from "../interrupts/guards";

export type { Me };

export function isStaff(me: Me | null): boolean {
  return me?.staff === true;
}

export function useMe(token: string | null): Me | null {
  const [me, setMe] = useState<Me | null>(null);
  useEffect(() => {
    setMe(null);
    if (!token) return;
    const abort = new AbortController();
    getJson("/me", token, { signal: abort.signal })
      .then((body) => {
        if (isMe(body)) setMe(body);
      })
      .catch(() => {
        // unknown: the staff-only links and every card's buttons stay hidden; the server refuses regardless
      });
    return () => abort.abort();
  }, [token]);
  return me;
}
