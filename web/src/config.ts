/** Where the Agent Server is: the page's own origin, or VITE_API_URL for `npm run dev`. */
export function apiUrl(): string {
  const fromEnv = import.meta.env.VITE_API_URL as string | undefined;
  return (fromEnv && fromEnv.trim()) || window.location.origin;
}

export const INBOX_POLL_MS = 4000;
