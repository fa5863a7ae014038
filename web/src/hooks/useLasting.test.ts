import { act, renderHook } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { useLasting } from "./useLasting";

describe("useLasting", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("a flicker shorter than the wait never shows; a flag that holds shows after it and goes off at once", () => {
    const { result, rerender } = renderHook(({ flag }) => useLasting(flag, 300), { initialProps: { flag: false } });
    rerender({ flag: true });
    act(() => vi.advanceTimersByTime(40));
    rerender({ flag: false });
    act(() => vi.advanceTimersByTime(1000));
    expect(result.current).toBe(false);

    rerender({ flag: true });
    act(() => vi.advanceTimersByTime(299));
    expect(result.current).toBe(false);
    act(() => vi.advanceTimersByTime(1));
    expect(result.current).toBe(true);
    rerender({ flag: false });
    expect(result.current).toBe(false);
  });
});
