// The chat page in headless Chromium, driven over the DevTools protocol: open the page,
// type a question, send it, and read the answer as the page shows it once streamed.
// Run by serve_test.sh (Node 20 needs --experimental-websocket):
//   node --experimental-websocket serve_page_test.mjs URL QUESTION SEED PROFILE_DIR
// Prints {"text", "chunks", "state"} of the page's answer as JSON.
import { spawn } from "node:child_process";

const [url, question, seed, profile] = process.argv.slice(2);
const chrome = spawn("chromium", ["--headless=new", "--no-sandbox", "--disable-gpu",
                                  "--no-first-run", "--remote-debugging-port=0",
                                  `--user-data-dir=${profile}`, "about:blank"],
                     { stdio: ["ignore", "ignore", "pipe"] });
const deadline = setTimeout(() => fail("no answer within 60 s"), 60000);
function fail(why) {
  console.error(`serve_page_test: ${why}`);
  chrome.kill("SIGKILL");
  process.exit(1);
}

// Chromium prints "DevTools listening on ws://..." once it is up.
const browserUrl = await new Promise((resolve) => {
  let err = "";
  chrome.stderr.on("data", (data) => {
    err += data;
    const m = err.match(/DevTools listening on (ws:\/\/\S+)/);
    if (m) resolve(m[1]);
  });
  chrome.on("exit", (code) => fail(`chromium exited (${code}): ${err}`));
});

const ws = new WebSocket(browserUrl);
await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject; });
let next = 0;
const pending = new Map();
ws.onmessage = (event) => {
  const message = JSON.parse(event.data);
  if (message.id !== undefined && pending.has(message.id)) {
    const { resolve } = pending.get(message.id);
    pending.delete(message.id);
    if (message.error) fail(`DevTools: ${JSON.stringify(message.error)}`);
    resolve(message.result);
  }
};
function send(method, params = {}, sessionId = undefined) {
  const id = ++next;
  ws.send(JSON.stringify({ id, method, params, sessionId }));
  return new Promise((resolve) => pending.set(id, { resolve }));
}

const { targetId } = await send("Target.createTarget", { url });
const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
async function evaluate(expression) {
  const { result, exceptionDetails } = await send("Runtime.evaluate",
                                                  { expression, returnByValue: true }, sessionId);
  if (exceptionDetails) fail(`page: ${JSON.stringify(exceptionDetails)}`);
  return result.value;
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// The page has loaded the model's name from /v1/models.
while (!(await evaluate(`document.readyState === "complete" &&
                         !!document.getElementById("model") &&
                         document.getElementById("model").textContent !== ""`))) await sleep(50);
// Typed and sent as a user does: the text in the box, Enter.
await evaluate(`
  document.getElementById("seed").value = ${JSON.stringify(seed)};
  document.getElementById("temperature").value = "1";
  document.getElementById("max_tokens").value = "12";
  const box = document.getElementById("question");
  box.value = ${JSON.stringify(question)};
  box.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));`);
let answer;
for (;;) {
  answer = await evaluate(`(() => {
    const bot = document.querySelector(".turn.bot, .turn.error");
    return bot && { text: bot.textContent, chunks: Number(bot.dataset.chunks),
                    state: bot.dataset.state };
  })()`);
  if (answer && answer.state !== "streaming") break;
  await sleep(50);
}
clearTimeout(deadline);
console.log(JSON.stringify(answer));
ws.close();
chrome.kill("SIGKILL");
process.exit(0);
