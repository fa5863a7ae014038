/**
 * On a card, `a` approves, `r` opens the reject reason box, `e` opens the edit form. The keys go
 * to the card that holds the focus, else to the first card on the page that takes them.
 */
import { useLayoutEffect, useRef, type RefObject } from "react";
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

/**
 * The listener is added once, in the commit that mounts the card (a layout effect, not a passive
 * one): a key pressed the moment the buttons show as enabled is never lost to a late effect.
 * `enabled` and the handlers are read when the key comes, from what the last commit rendered.
 */
export function useDecisionKeys(ref: RefObject<HTMLElement | null>, handlers: DecisionKeyHandlers, enabled: boolean) {
  const latest = useRef({ handlers, enabled });
  useLayoutEffect(() => {
    latest.current = { handlers, enabled };
  });
  useLayoutEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      const own = ref.current;
      if (!latest.current.enabled || !own || !isShortcut(event) || !isCurrent(own)) return;
      const { approve, reject, edit } = latest.current.handlers;
      const action = { a: approve, r: reject, e: edit }[event.key];
      if (!action) return;
      event.preventDefault();
      action();
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [ref]);
}
