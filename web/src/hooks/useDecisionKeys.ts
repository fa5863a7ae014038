/**
 * On a card, `a` approves, `r` opens the reject reason box, `e` opens the edit form. The keys go
 * to the card that holds the focus, else to the first card on the page that takes them.
 */
import { useEffect, useRef, type RefObject } from "react";
import { isShortcut } from "./keyboard";

export const DECISION_KEYS_ATTR = "data-decision-keys";

export interface DecisionKeyHandlers {
  approve?: () => void;
  reject?: () => void;
  edit?: () => void;
}

function isCurrent(own: HTMLElement): boolean {
  const active = document.activeElement;
  const focused = active instanceof HTMLElement ? active.closest(`[${DECISION_KEYS_ATTR}]`) : null;
  if (focused) return focused === own;
  return document.querySelector(`[${DECISION_KEYS_ATTR}]`) === own;
}

export function useDecisionKeys(ref: RefObject<HTMLElement | null>, handlers: DecisionKeyHandlers, enabled: boolean) {
  const latest = useRef(handlers);
  latest.current = handlers;
  useEffect(() => {
    if (!enabled) return;
    const onKey = (event: KeyboardEvent) => {
      const own = ref.current;
      if (!own || !isShortcut(event) || !isCurrent(own)) return;
      const action = { a: latest.current.approve, r: latest.current.reject, e: latest.current.edit }[event.key];
      if (!action) return;
      event.preventDefault();
      action();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [ref, enabled]);
}
