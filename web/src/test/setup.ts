// Runs before every test file. The files of the "shared" project (vite.config.ts) share one jsdom per
// worker, so nothing a test leaves behind may reach the next file's tests: rendered trees, storage
// (absent in the files that run under `@vitest-environment node`).
import { cleanup } from "@testing-library/react";
import { afterEach } from "vitest";

afterEach(() => {
  cleanup();
  globalThis.sessionStorage?.clear();
  globalThis.localStorage?.clear();
});
