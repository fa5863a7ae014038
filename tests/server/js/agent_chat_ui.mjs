// Drives the server the way Agent Chat UI does: LangGraph's JS SDK with `apiKey` (sent as
// x-api-key), batched resumes `{decisions: [...]}`, and edited args typed into text boxes.
// Usage: node agent_chat_ui.mjs <plan.json>; prints one JSON line with what happened.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const { Client } = await import(pathToFileURL(plan.sdk).href);

async function attempt(step) {
  try {
    return { ok: true, value: await step() };
  } catch (error) {
    return { ok: false, status: error?.status ?? error?.response?.status ?? null, message: String(error?.message ?? error) };
  }
}

const asUser = (apiKey) => new Client({ apiUrl: plan.url, apiKey, defaultHeaders: {} });
const requester = asUser(plan.requester_key);
const reviewer = asUser(plan.reviewer_key);
const results = {};

for (const run of plan.runs) {
  const thread = await requester.threads.create();
  await requester.runs.wait(thread.thread_id, run.assistant, {
    input: { messages: [{ type: "human", content: run.message }] },
  });
  const state = await reviewer.threads.getState(thread.thread_id);
  const pending = state.tasks.flatMap((task) => task.interrupts ?? []);
  const answers = [];
  for (const resume of run.resumes) {
    answers.push(await attempt(() => reviewer.runs.wait(thread.thread_id, run.assistant, { command: { resume } })));
  }
  const after = await reviewer.threads.get(thread.thread_id);
  results[run.name] = {
    thread_id: thread.thread_id,
    pending: pending.map((i) => i.value),
    answers: answers.map((a) => (a.ok ? { ok: true } : a)),
    status: after.status,
  };
}

results.anonymous = await attempt(() => asUser(undefined).threads.search({ limit: 1 }));
results.wrong_key = await attempt(() => asUser("not-a-token").threads.search({ limit: 1 }));
console.log(JSON.stringify(results));
