// Agent Chat UI's own calls, made by the same client code: LangChain's `useStream` hook from
// `@langchain/langgraph-sdk/react` (the hook Agent Chat UI builds on, rendered in jsdom with React),
// with the options its Stream provider passes (apiUrl, apiKey, assistantId, threadId,
// fetchStateHistory: true), and `submit` called as its components call it
// (langchain-ai/agent-chat-ui: src/providers/Stream.tsx, src/components/thread/index.tsx,
// src/components/thread/agent-inbox/hooks/use-interrupted-actions.tsx). Plain SDK calls as the
// JS docs show them (`new Command({ resume })`) go through the SDK's Client.
// Every request the SDK sends is recorded with its body and answer, so the test sees exactly
// what the client sent. Usage: node agent_chat_ui_stream.mjs <plan.json>; prints one JSON line.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { randomUUID } from "node:crypto";
import { pathToFileURL } from "node:url";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const requireWeb = createRequire(`${plan.web}/package.json`);
const load = (name) => import(pathToFileURL(requireWeb.resolve(name)).href);

const { JSDOM } = await load("jsdom");
const dom = new JSDOM("<!doctype html><html><body></body></html>", { url: "http://127.0.0.1/" });
for (const key of ["window", "document", "navigator", "localStorage", "sessionStorage", "HTMLElement", "Node", "MutationObserver"]) {
  Object.defineProperty(globalThis, key, { value: dom.window[key], configurable: true, writable: true });
}
globalThis.IS_REACT_ACT_ENVIRONMENT = true;

const sent = [];
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init = {}) => {
  const url = new URL(typeof input === "string" ? input : input.url);
  const entry = { method: init.method ?? "GET", path: url.pathname, body: init.body ? JSON.parse(init.body) : null };
  const response = await realFetch(input, init);
  entry.status = response.status;
  if (!response.ok) entry.answer = await response.clone().text();
  sent.push(entry);
  return response;
};

const { renderHook, waitFor, act } = await load("@testing-library/react");
const { useStream } = await load("@langchain/langgraph-sdk/react");
const { Client } = await load("@langchain/langgraph-sdk");
const { Command, END } = await load("@langchain/langgraph");

const runPaths = /\/threads\/[^/]+\/(runs(\/stream|\/wait)?|commands)$/;

async function opened(user, thread) {
  // Agent Chat UI's StreamSession: the hook with the thread open and its history fetched.
  const hook = renderHook(() =>
    useStream({ apiUrl: plan.url, apiKey: plan.tokens[user], assistantId: plan.assistant, threadId: thread, fetchStateHistory: true }),
  );
  await waitFor(() => {
    if (hook.result.current.isLoading || hook.result.current.messages.length === 0) throw new Error("loading");
  }, { timeout: 30000 });
  return hook;
}

function toolResultsForOpenCalls(messages) {
  // What Agent Chat UI puts before a typed message when the last AI turn has calls with no result:
  // a tool message per call ("do-not-render-" ids), so the model sees every call answered.
  const last = messages.at(-1);
  if (!last || last.type !== "ai" || !(last.tool_calls ?? []).length) return [];
  return last.tool_calls.map((call) => ({
    type: "tool",
    tool_call_id: call.id ?? "",
    id: `do-not-render-${randomUUID()}`,
    name: call.name,
    content: "Successfully handled tool call.",
  }));
}

async function submitted(hook, values, options) {
  const before = sent.length;
  await act(async () => {
    await hook.result.current.submit(values, options);
  });
  await waitFor(() => {
    if (hook.result.current.isLoading) throw new Error("running");
  }, { timeout: 60000 });
  const runs = sent.slice(before).filter((entry) => entry.method === "POST" && runPaths.test(entry.path));
  const { error } = hook.result.current;
  hook.unmount();
  return { runs, error: error ? String(error?.message ?? error) : null };
}

const steps = {
  // use-interrupted-actions.tsx, resumeRun: thread.submit({}, { command: { resume: { decisions } } })
  async resume({ user, thread, decisions }) {
    return submitted(await opened(user, thread), {}, { command: { resume: { decisions } } });
  },
  // thread/index.tsx, handleSubmit: fake tool results, then the typed text as content blocks
  async message({ user, thread, text }) {
    const hook = await opened(user, thread);
    const human = { id: randomUUID(), type: "human", content: [{ type: "text", text }] };
    const toolMessages = toolResultsForOpenCalls(hook.result.current.messages);
    return submitted(hook, { messages: [...toolMessages, human], context: undefined }, {
      streamMode: ["values"],
      streamSubgraphs: true,
      streamResumable: true,
      optimisticValues: (prev) => ({ ...prev, messages: [...(prev.messages ?? []), ...toolMessages, human] }),
    });
  },
  // use-interrupted-actions.tsx, handleResolve: "Mark as Resolved"
  async resolve({ user, thread }) {
    return submitted(await opened(user, thread), {}, { command: { goto: END } });
  },
  // The JS SDK as its docs show it: client.runs.wait(thread, assistant, { command: new Command({ resume }) })
  async command({ user, thread, resume }) {
    const before = sent.length;
    const client = new Client({ apiUrl: plan.url, apiKey: plan.tokens[user] });
    let error = null;
    try {
      await client.runs.wait(thread, plan.assistant, { command: new Command({ resume }) });
    } catch (caught) {
      error = String(caught?.message ?? caught);
    }
    return { runs: sent.slice(before).filter((entry) => runPaths.test(entry.path)), error };
  },
};

const results = [];
for (const step of plan.steps) {
  results.push({ name: step.name, ...(await steps[step.kind](step)) });
}
console.log(JSON.stringify(results));
process.exit(0);
