import { defineConfig } from "vitest/config";
import { MOCKS_MODULES } from "./src/test/isolated";

const TESTS = "src/**/*.test.{ts,tsx}";

// Served by the LangGraph server under /app/; the API is the same origin
// (VITE_API_URL overrides it for `npm run dev`).
export default defineConfig({
  base: "/app/",
  // The app checks what the server sends against the published contract (src/contracts/schema.ts imports
  // ../hitl/contracts/schemas/contracts.json): `npm run dev` may serve that folder too.
  server: { fs: { allow: [".", "../hitl/contracts/schemas"] } },
  oxc: { jsx: { runtime: "automatic" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    chunkSizeWarningLimit: 1500,
    rolldownOptions: {
      // React libraries mark modules "use client"; meaningless in a client-only bundle.
      onLog(level, log, handler) {
        if (log.code === "MODULE_LEVEL_DIRECTIVE") return;
        handler(level, log);
      },
    },
  },
  test: {
    environment: "jsdom",
    restoreMocks: true,
    // A test may wait up to 60 s for what it expects (`src/test/setup.ts`); its own limit is above that. On a
    // busy machine (make test runs Vitest beside pytest's servers) the first render of a lazily loaded page
    // took over 20 s; a test still ends as soon as it passes.
    testTimeout: 120_000,
    setupFiles: ["src/test/setup.ts"],
    // One jsdom and one module graph per worker, not per file: building a jsdom and importing React
    // for each of 15 files was two thirds of the suite's CPU (24 s -> 10 s). A file that replaces a
    // module with `vi.mock` needs a module graph of its own (`src/test/isolated.ts`).
    projects: [
      { extends: true, test: { name: "shared", include: [TESTS], exclude: MOCKS_MODULES, isolate: false } },
      { extends: true, test: { name: "isolated", include: MOCKS_MODULES } },
    ],
  },
});
