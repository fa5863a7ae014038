import { defineConfig } from "vitest/config";

// Served by the LangGraph server under /app/; the API is the same origin
// (VITE_API_URL overrides it for `npm run dev`).
export default defineConfig({
  base: "/app/",
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
    include: ["src/**/*.test.{ts,tsx}"],
    restoreMocks: true,
  },
});
