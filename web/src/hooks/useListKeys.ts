/** `j` / `k` move a selection through a list, `Enter` opens the selected entry (the inbox). */
import { useLayoutEffect, useRef, useState } from "react";
import { isShortcut } from "./keyboard";

export function useListKeys(count: number, onOpen: (index: number) => void) {
  const [selected, setSelected] = useState(-1);
  const latest = useRef({ count, onOpen, selected });
  // layout effects: the listener and what it reads are in place in the commit that shows the rows
  useLayoutEffect(() => {
    latest.current = { count, onOpen, selected };
  });
  useLayoutEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (!isShortcut(event)) return;
      const { count: n, selected: current } = latest.current;
      if (n === 0) return;
      if (event.key === "j" || event.key === "k") {
        event.preventDefault();
        const step = event.key === "j" ? 1 : -1;
        setSelected(current < 0 ? 0 : Math.min(n - 1, Math.max(0, current + step)));
      } else if (event.key === "Enter" && current >= 0 && current < n) {
        // Enter on a focused link or button keeps its own meaning
        if (event.target instanceof HTMLElement && event.target.closest("a, button")) return;
        event.preventDefault();
        latest.current.onOpen(current);
      }
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, []);

  return { selected: selected < count ? selected : count - 1, select: setSelected };
}
