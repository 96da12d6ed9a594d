// ember's server through OpenAI's own Node client (the openai npm package), as a program
// written for OpenAI's API uses it. Run by serve_test.sh:
//   node serve_client_test.mjs OPENAI_PACKAGE_DIR BASE_URL API_KEY
// Prints "ok <check>" or "FAIL <check>: ..." per check; exits 1 if any failed.
import path from "node:path";

const [pkg, baseURL, apiKey] = process.argv.slice(2);
const { default: OpenAI } = await import(path.resolve(pkg, "index.mjs"));
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 60000 });
let failures = 0;
function check(name, ok, detail) {
  console.log(ok ? `ok   ${name}` : `FAIL ${name}: ${JSON.stringify(detail)}`);
  if (!ok) failures++;
}

const models = await client.models.list();
check("models.list", models.data.length === 1 && models.data[0].id === "ember", models.data);

const ask = { model: "ember", messages: [{ role: "user", content: "What is a school?" }],
              max_tokens: 12, seed: 11, temperature: 1 };
const whole = await client.chat.completions.create(ask);
const answer = whole.choices[0].message.content;
check("chat.completions.create", whole.object === "chat.completion" &&
      whole.choices[0].message.role === "assistant" && typeof answer === "string" &&
      ["stop", "length"].includes(whole.choices[0].finish_reason), whole);
check("usage", whole.usage.prompt_tokens > 0 &&
      whole.usage.total_tokens === whole.usage.prompt_tokens + whole.usage.completion_tokens, whole.usage);

// Streamed: the deltas add up to the same seed's whole answer.
const stream = await client.chat.completions.create({ ...ask, stream: true,
                                                       stream_options: { include_usage: true } });
let streamed = "", chunks = 0, finish = null, usage = null;
for await (const chunk of stream) {
  if (chunk.usage) usage = chunk.usage;
  if (!chunk.choices.length) continue;
  chunks++;
  streamed += chunk.choices[0].delta.content ?? "";
  finish = chunk.choices[0].finish_reason ?? finish;
}
check("stream equals the whole answer", streamed === answer, { streamed, answer });
check("stream's chunks", chunks >= 3 && finish === whole.choices[0].finish_reason, { chunks, finish });
check("stream's usage", usage && usage.completion_tokens === whole.usage.completion_tokens, usage);

// The legacy completions endpoint, two choices seeded 5 and 6.
const two = await client.completions.create({ model: "ember", prompt: "The quick", max_tokens: 6,
                                              n: 2, seed: 5 });
const six = await client.completions.create({ model: "ember", prompt: "The quick", max_tokens: 6,
                                              seed: 6 });
check("completions n=2", two.choices.length === 2 && two.choices[1].text === six.choices[0].text,
      { two: two.choices, six: six.choices });

// Errors arrive as the client's own error classes.
async function refused(name, Class, status, request) {
  try {
    await request();
    check(name, false, "no error");
  } catch (e) {
    check(name, e instanceof Class && e.status === status, { name: e.constructor.name, status: e.status,
                                                            message: e.message });
  }
}
await refused("unknown model", OpenAI.NotFoundError, 404,
              () => client.chat.completions.create({ ...ask, model: "gpt-4o" }));
await refused("bad temperature", OpenAI.BadRequestError, 400,
              () => client.chat.completions.create({ ...ask, temperature: 7 }));
await refused("a tool call", OpenAI.BadRequestError, 400,
              () => client.chat.completions.create({ ...ask, tools: [{ type: "function",
                                                                       function: { name: "f" } }] }));
const stranger = new OpenAI({ baseURL, apiKey: "not-the-key", maxRetries: 0 });
await refused("wrong key", OpenAI.AuthenticationError, 401, () => stranger.models.list());

process.exit(failures ? 1 : 0);
