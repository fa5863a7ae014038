/** The reviewer's bearer token, kept in sessionStorage for this tab only. */
import { useCallback, useState } from "react";

const TOKEN_KEY = "hitl.token";

export function readToken(): string | null {
  try {
    return window.sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export interface Session {
  token: string | null;
  signIn: (token: string) => void;
  signOut: () => void;
}

export function useSession(): Session {
  const [token, setToken] = useState<string | null>(readToken);
  const signIn = useCallback((next: string) => {
    const trimmed = next.trim();
    if (!trimmed) return;
    window.sessionStorage.setItem(TOKEN_KEY, trimmed);
    setToken(trimmed);
  }, []);
  const signOut = useCallback(() => {
    window.sessionStorage.removeItem(TOKEN_KEY);
    setToken(null);
  }, []);
  return { token, signIn, signOut };
}
