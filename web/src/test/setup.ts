// Runs before every test file. The files of the "shared" project (vite.config.ts) share one jsdom per
// worker, so nothing a test leaves behind may reach the next file's tests: rendered trees, storage
// (absent in the files that run under `@vitest-environment node`), the agents read per token for the session
// (one file's `[]` for "tok-refused" once answered another file's test that expected a 401 for it).
import { cleanup, configure } from "@testing-library/react";
import { afterEach } from "vitest";
import { forgetServedAgents } from "../hooks/useAgents";

// `findBy…` and `waitFor` wait up to 60 s (Testing Library's default is 1 s): a form's code (rjsf and its
// validator) or the dashboard's (Recharts) loads on first use, and on a busy machine (`make test` runs Vitest
// beside pytest's servers; 2 cores shared by several suites) that first import took over 20 s. This is a
// deadline for failing, not a time to wait: a test still ends as soon as what it waits for shows.
configure({ asyncUtilTimeout: 60_000 });

afterEach(() => {
  cleanup();
  globalThis.sessionStorage?.clear();
  globalThis.localStorage?.clear();
  forgetServedAgents();
});
