// @vitest-environment node
import { expect, it } from "vitest";
import { MOCKS_MODULES } from "./isolated";

const sources = import.meta.glob<string>("../**/*.test.{ts,tsx}", {
  query: "?raw",
  import: "default",
  eager: true,
});
const MOCKS = /\bvi\.(mock|doMock)\(/;

it("every test file that mocks a module is listed in MOCKS_MODULES, so it runs isolated", () => {
  const mocking = Object.entries(sources)
    .filter(([, text]) => MOCKS.test(text))
    .map(([path]) => path.replace(/^\.\.\//, "src/"));
  expect(Object.keys(sources).length).toBeGreaterThan(10);
  expect(mocking.sort()).toEqual([...MOCKS_MODULES].sort());
});
