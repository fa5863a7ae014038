/**
 * Test files that `vi.mock` a module. The rest share one jsdom and module graph per worker
 * (`vite.config.ts`, project "shared"), where a module another file imported first stays real; these
 * run in a module graph of their own (project "isolated"). `isolation.test.ts` fails when a file
 * that mocks a module is missing here.
 */
export const MOCKS_MODULES = ["src/hooks/useApprovals.test.tsx"];
