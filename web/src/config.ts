/** Where the Agent Server is: the page's own origin, or VITE_API_URL for `npm run dev`. */
export function apiUrl(): string {
  const fromEnv = import.meta.env.VITE_API_URL as string | undefined;
  return (fromEnv && fromEnv.trim()) || window.location.origin;
}

/** Assistants (served graphs) a conversation can be started with. */
export const ASSISTANTS = ["support", "travel", "ops"] as const;
export type AssistantId = (typeof ASSISTANTS)[number];

export function isAssistantId(value: unknown): value is AssistantId {
  return typeof value === "string" && (ASSISTANTS as readonly string[]).includes(value);
}

export const INBOX_POLL_MS = 4000;
