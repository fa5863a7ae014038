/**
 * Hash routes: `#/inbox`, `#/analytics`, `#/threads/new` (the first agent the server serves) or
 * `#/threads/new?agent=<graph>`, `#/threads/<id>?agent=<graph>`.
 */
import { useEffect, useState } from "react";

export type Route =
  | { page: "inbox" }
  | { page: "analytics" }
  | { page: "thread"; threadId: string | null; agent: string | null };

export function parseRoute(hash: string): Route {
  const [path = "", query = ""] = hash.replace(/^#/, "").split("?", 2);
  const params = new URLSearchParams(query);
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "threads") {
    const id = parts[1];
    return { page: "thread", threadId: id && id !== "new" ? id : null, agent: params.get("agent") };
  }
  if (parts[0] === "analytics") return { page: "analytics" };
  return { page: "inbox" };
}

export function threadHref(threadId: string | null, agent?: string | null): string {
  const query = agent ? `?agent=${encodeURIComponent(agent)}` : "";
  return `#/threads/${threadId ? encodeURIComponent(threadId) : "new"}${query}`;
}

/** Replaces the current history entry (a new thread id is not a new page). */
export function replaceHash(hash: string): void {
  const url = new URL(window.location.href);
  url.hash = hash;
  window.history.replaceState(window.history.state, "", url);
  window.dispatchEvent(new HashChangeEvent("hashchange"));
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(window.location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(window.location.hash));
    window.addEventListener("hashchange", onChange);
    return () => window.removeEventListener("hashchange", onChange);
  }, []);
  return route;
}
