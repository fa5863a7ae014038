/**
 * A flag that counts only once it has held for a while: `true` after `flag` has stayed on for
 * `ms`, `false` as soon as it goes off.
 *
 * Opening a paused thread replays its last run's lifecycle (running, then interrupted) within
 * a few tens of milliseconds: `isLoading` flickers on and off. Cards disabled by that flicker
 * drop a click or key pressed in it; a run that really goes on holds the flag for far longer.
 */
import { useEffect, useState } from "react";

export function useLasting(flag: boolean, ms: number): boolean {
  const [lasted, setLasted] = useState(false);
  useEffect(() => {
    if (!flag) {
      setLasted(false);
      return;
    }
    const timer = setTimeout(() => setLasted(true), ms);
    return () => clearTimeout(timer);
  }, [flag, ms]);
  return flag && lasted;
}
