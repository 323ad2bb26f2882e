import { ROUTE_FAMILIES, type RouteSpec } from "../../core/routes/table.ts";

/**
 * A deterministic corpus of hostile requests (test/e2e/fuzz.test.ts): the same seed gives the same requests.
 * Bodies: huge strings, deep nesting, wrong types, lone surrogates, huge and odd numbers, prototype-pollution
 * keys, malformed JSON, odd content types. Headers: inline configs (huge, deep, malformed, base64 junk,
 * backtracking $regex), metadata, timeouts, providers, keys, and header blocks over the limit.
 */

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** What the request is (for the failure message). */
  label: string;
}

/** mulberry32: a small seeded generator (deterministic corpus). */
export class Random {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(max: number): number {
    return Math.floor(this.next() * max);
  }
  chance(probability: number): boolean {
    return this.next() < probability;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}

/** A conditional rule `{query, then}`. */
// biome-ignore lint/suspicious/noThenProperty: `then` is the config format's name for the chosen target.
const when = (query: unknown, target: string) => ({ query, then: target });

const POLLUTION_KEYS = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty", "valueOf"];
const ODD_STRINGS = [
  "",
  " ",
  "\u0000",
  "\uD800",
  "\uDFFF",
  "a\uD800b",
  "\uFEFF",
  "../../etc/passwd",
  "%00",
  "%E0%A4%A",
  "$" + "{jndi:ldap://x}", // a log-injection string, kept out of a template
  "<script>",
  "' OR 1=1 --",
  "😀".repeat(3),
  "\u202E",
  "null",
  "NaN",
  "[object Object]",
];
const ODD_NUMBERS = [
  "0",
  "-0",
  "1e308",
  "-1e308",
  "1e400",
  "-1e400",
  "5e-324",
  "9007199254740993",
  "9223372036854775807",
  "-9223372036854775808",
  "18446744073709551616",
  "2147483648",
  "4294967296",
  "1.5",
  "-1",
  "123456789012345678901234567890",
];
const MODELS = ["gpt-4o", "gpt-4o-mini", "text-embedding-3-small", "gpt-3.5-turbo-instruct", "o1", "mock-model"];
const REGEXES = ["^(a+)+$", "(a|aa)+$", "(.*a){20}", "(?=a)", "\\1(a)", "[", "(a{1000}){1000}", "^gpt", ".*"];

function hugeString(random: Random): string {
  const size = random.pick([1_000, 10_000, 100_000, 100_000, 1_000_000, 3_000_000]);
  const kind = random.int(4);
  if (kind === 0) return "a".repeat(size);
  if (kind === 1) return " ".repeat(size);
  if (kind === 2) return "\uD83D".repeat(Math.min(size, 100_000));
  const words = ["lorem", "ipsum", "dolor", "sit", "amet", "€", "日本", "\n"];
  let text = "";
  while (text.length < Math.min(size, 200_000)) text += `${random.pick(words)} `;
  return text;
}

function deepJson(random: Random): string {
  const depth = random.pick([50, 129, 1_000, 10_000, 100_000]);
  return random.chance(0.5)
    ? `${"[".repeat(depth)}${"]".repeat(depth)}`
    : `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
}

/** A JSON value (as text) of a random hostile kind. */
function hostileValue(random: Random, depth = 0): string {
  switch (random.int(depth > 2 ? 6 : 10)) {
    case 0:
      return JSON.stringify(random.pick(ODD_STRINGS));
    case 1:
      return random.pick(ODD_NUMBERS);
    case 2:
      return random.pick(["true", "false", "null", "[]", "{}", '""']);
    case 3:
      return JSON.stringify(random.pick(MODELS));
    case 4:
      return random.chance(0.1) ? JSON.stringify(hugeString(random)) : JSON.stringify("x".repeat(random.int(300)));
    case 5:
      return String(random.int(1000) - 500);
    case 6:
      return random.chance(0.15) ? deepJson(random) : `[${hostileValue(random, depth + 1)}]`;
    case 7: {
      const key = random.chance(0.5) ? random.pick(POLLUTION_KEYS) : random.pick(["role", "content", "type", "x"]);
      return `{${JSON.stringify(key)}:${hostileValue(random, depth + 1)}}`;
    }
    case 8:
      return `{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}`;
    default:
      return `[${Array.from({ length: random.int(5) }, () => hostileValue(random, depth + 1)).join(",")}]`;
  }
}

function message(random: Random): string {
  if (random.chance(0.7)) {
    const content = random.chance(0.1) ? JSON.stringify(hugeString(random)) : JSON.stringify(random.pick(ODD_STRINGS));
    return `{"role":${JSON.stringify(random.pick(["user", "system", "assistant", "tool", "developer", "x"]))},"content":${content}}`;
  }
  return hostileValue(random);
}

/** An inference body: mostly the right shape with one or more hostile fields. */
function inferenceBody(random: Random, route: string): string {
  const fields: string[] = [];
  const model = random.chance(0.8)
    ? JSON.stringify(random.pick(MODELS))
    : random.chance(0.3)
      ? JSON.stringify(`m${"\uD800".repeat(random.int(3))}${"x".repeat(random.pick([10, 300, 100_000]))}`)
      : hostileValue(random);
  if (random.chance(0.95)) fields.push(`"model":${model}`);
  if (route === "/v1/chat/completions" && random.chance(0.95))
    fields.push(`"messages":[${Array.from({ length: 1 + random.int(3) }, () => message(random)).join(",")}]`);
  if (route === "/v1/completions")
    fields.push(`"prompt":${random.chance(0.6) ? JSON.stringify(random.pick(ODD_STRINGS)) : hostileValue(random)}`);
  if (route === "/v1/embeddings" || route === "/v1/moderations" || route === "/v1/audio/speech")
    fields.push(`"input":${random.chance(0.6) ? '"hello"' : hostileValue(random)}`);
  if (route === "/v1/audio/speech") fields.push(`"voice":${random.chance(0.6) ? '"alloy"' : hostileValue(random)}`);
  if (route === "/v1/images/generations" || route === "/v1/images/edits")
    fields.push(`"prompt":${random.chance(0.6) ? '"a cat"' : hostileValue(random)}`);
  if (route === "/v1/rerank") {
    fields.push(`"query":${random.chance(0.6) ? '"q"' : hostileValue(random)}`);
    fields.push(`"documents":${random.chance(0.6) ? '["a","b"]' : hostileValue(random)}`);
  }
  if (route === "/v1/ocr")
    fields.push(
      `"document":${random.chance(0.6) ? '{"type":"document_url","document_url":"https://example.com/a.pdf"}' : hostileValue(random)}`,
    );
  const extras = [
    "seed",
    "temperature",
    "max_tokens",
    "n",
    "stream",
    "tools",
    "stop",
    "user",
    "logit_bias",
    "metadata",
  ];
  for (let index = random.int(4); index > 0; index--) {
    const key = random.chance(0.2) ? random.pick(POLLUTION_KEYS) : random.pick(extras);
    fields.push(`${JSON.stringify(key)}:${key === "seed" ? random.pick(ODD_NUMBERS) : hostileValue(random)}`);
  }
  if (random.chance(0.05)) fields.push(`"extra":${deepJson(random)}`);
  return `{${fields.join(",")}}`;
}

function malformed(random: Random): string {
  return random.pick([
    "{not json",
    "",
    "   ",
    "null",
    "[]",
    '"just a string"',
    "42",
    '{"model":"gpt-4o",',
    '{"a":1}}',
    "\uFEFF{}",
    '{"model":"\\ud800"}',
    '{"model":"x","messages":[{"role":"user","content":"\\u0000"}]}',
    '{"a":' + "1".repeat(10_000) + "}",
  ]);
}

function inlineConfig(random: Random, mockUrl: string): string {
  switch (random.int(8)) {
    case 0:
      return "{not json";
    case 1:
      return Buffer.from(
        random.pick([JSON.stringify({ provider: "openai", custom_host: `${mockUrl}/v1` }), "junk", "{{{{"]),
      ).toString("base64");
    case 2:
      return deepJson(random).slice(0, 60_000);
    case 3: {
      const targets = Array.from({ length: random.pick([2, 100, 1_000]) }, (_, index) => ({
        name: `t${index}`,
        provider: "openai",
        custom_host: `${mockUrl}/v1`,
      }));
      return JSON.stringify({
        strategy: {
          mode: "conditional",
          conditions: [when({ "params.model": { $regex: random.pick(REGEXES) } }, "t1")],
          default: "t0",
        },
        targets,
      });
    }
    case 4:
      return JSON.stringify({
        provider: "openai",
        custom_host: `${mockUrl}/v1`,
        request_timeout: Number(random.pick(ODD_NUMBERS)),
        retry: { attempts: random.int(10) },
      });
    case 5:
      return `{"provider":"openai","custom_host":"${mockUrl}/v1","override_params":${hostileValue(random)}}`;
    case 6:
      return random.pick(["pc-does-not-exist", "x".repeat(500), "@slug", "🙂"]);
    default:
      return JSON.stringify({ strategy: { mode: random.pick(["fallback", "loadbalance", "nope"]) }, targets: [] });
  }
}

/** Only visible ASCII in header values (a client refuses the rest before sending). */
const headerSafe = (value: string) => value.replace(/[^\x20-\x7e]/g, "?");

function inferenceHeaders(random: Random, gateway: { adminKey: string; mockUrl: string }): Record<string, string> {
  const headers: Record<string, string> = {
    "x-gateway-api-key": random.chance(0.95) ? gateway.adminKey : random.pick(["", "junk", "x".repeat(5_000)]),
    authorization: "Bearer sk-fuzz",
  };
  if (random.chance(0.3)) headers["x-gateway-config"] = headerSafe(inlineConfig(random, gateway.mockUrl));
  else {
    headers["x-gateway-provider"] = random.chance(0.9) ? "openai" : random.pick(["", "nope", "@nope", "openai\t"]);
    headers["x-gateway-custom-host"] = random.chance(0.9)
      ? `${gateway.mockUrl}/v1`
      : random.pick(["http://169.254.169.254/", "file:///etc/passwd", "http://10.0.0.1/", "not a url", "gopher://x/"]);
  }
  if (random.chance(0.2))
    headers["x-gateway-metadata"] = headerSafe(
      random.pick(['{"a":"b"}', "{bad", '{"__proto__":{"x":"y"}}', JSON.stringify({ k: "v".repeat(10_000) }), "[]"]),
    );
  if (random.chance(0.1)) headers["x-gateway-request-timeout"] = random.pick(ODD_NUMBERS);
  if (random.chance(0.05)) headers["x-gateway-trace-id"] = "t".repeat(random.pick([10, 1_000, 50_000]));
  if (random.chance(0.01)) headers["x-huge"] = "h".repeat(600 * 1024);
  return headers;
}

/**
 * Data-plane families of stored resources (not inference): fuzzed like the control plane. The MCP family too:
 * its endpoint names a server by id or slug, and the registry takes list parameters.
 */
const RESOURCE_FAMILIES = new Set(["files", "batches", "fine-tuning", "mcp"]);

const CONTROL_ROUTES: RouteSpec[] = ROUTE_FAMILIES.filter(
  (family) => !family.dataPlane || RESOURCE_FAMILIES.has(family.name),
)
  .flatMap((family) => family.routes)
  .filter((route) => !route.path.includes("*"));

function controlRequest(random: Random, gateway: { adminKey: string }): FuzzRequest {
  const route = random.pick(CONTROL_ROUTES);
  const path = route.path.replace(/:\w+/g, () =>
    encodeURIComponent(
      random.pick(["does-not-exist", "x".repeat(2_000), "%", "..", "\uD800", "__proto__", "0"]).toWellFormed(),
    ),
  );
  const query = random.chance(0.3)
    ? `?${random.pick(["limit=-1", "limit=1e9", "page_size=abc", "cursor=%ZZ", "time_of_generation_min=x", `q=${"a".repeat(5_000)}`])}`
    : "";
  const headers: Record<string, string> = { "x-gateway-api-key": gateway.adminKey };
  let body: string | undefined;
  if (route.method !== "GET" && route.method !== "DELETE") {
    headers["content-type"] = random.chance(0.9)
      ? "application/json"
      : random.pick(["text/plain", "application/xml", ""]);
    body = random.chance(0.2) ? malformed(random) : hostileValue(random);
    if (random.chance(0.5))
      body = `{"name":${hostileValue(random)},"slug":${hostileValue(random)},"config":${hostileValue(random)},"metadata":${hostileValue(random)}}`;
    // The OAuth endpoints and authorize pages read forms (core/features/mcp/oauth): hostile forms too.
    if (route.path.startsWith("/oauth/") && random.chance(0.6)) {
      headers["content-type"] = "application/x-www-form-urlencoded";
      body = oauthForm(random);
    }
  }
  return {
    method: route.method,
    path: path + query,
    headers,
    body,
    label: `${route.method} ${(path + query).slice(0, 200)}`,
  };
}

/** A form for the OAuth endpoints: real parameter names with hostile values, repeats, odd encodings. */
function oauthForm(random: Random): string {
  const names = [
    "grant_type",
    "code",
    "code_verifier",
    "redirect_uri",
    "client_id",
    "client_secret",
    "refresh_token",
    "token",
    "token_type_hint",
    "resource",
    "scope",
    "request_id",
    "csrf",
    "api_key",
    "decision",
  ];
  const values = [
    "authorization_code",
    "refresh_token",
    "approve",
    "gwoat_x",
    "gwort_x",
    "gwoac_x",
    "gwoc_x",
    "%",
    "%ZZ",
    "\u0000",
    "x".repeat(70_000),
    "http://127.0.0.1/cb#frag",
    "__proto__",
  ];
  const pairs = Array.from({ length: 1 + random.int(8) }, () => {
    const value = random.pick(values);
    return `${random.pick(names)}=${random.chance(0.5) ? encodeURIComponent(value) : value}`;
  });
  return pairs.join("&");
}

const INFERENCE_ROUTES = [
  "/v1/chat/completions",
  "/v1/chat/completions",
  "/v1/chat/completions",
  "/v1/completions",
  "/v1/embeddings",
  "/v1/models",
  "/v1/proxy/v1/chat/completions",
  "/v1/responses",
  "/v1/images/generations",
  "/v1/images/edits",
  "/v1/audio/speech",
  "/v1/audio/transcriptions",
  "/v1/moderations",
  "/v1/rerank",
  "/v1/ocr",
];

/** Multipart routes get hostile forms too: odd boundaries, huge field names, files under odd names, cut bodies. */
const MULTIPART_PATHS = new Set(["/v1/images/edits", "/v1/audio/transcriptions"]);

function hostileForm(random: Random): { contentType: string; body: string } {
  const boundary = random.pick(["b", "x".repeat(70), "--", "a b", "\u00e9"]);
  const part = (name: string, value: string, filename?: string) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"${filename === undefined ? "" : `; filename="${filename}"`}\r\n\r\n${value}\r\n`;
  const parts = Array.from({ length: 1 + random.int(6) }, () =>
    part(
      random.pick([
        "file",
        "image",
        "image[]",
        "model",
        "prompt",
        "n",
        "response_format",
        "__proto__",
        "x".repeat(3_000),
      ]),
      random.pick([...ODD_STRINGS, "whisper-1", "2", "-1", "1e400", "RIFF\u0000\u0000"]),
      random.chance(0.4) ? random.pick(["a.wav", "../../x.png", "", "\uD800.mp3"]) : undefined,
    ),
  );
  const end = random.chance(0.8) ? `--${boundary}--\r\n` : "";
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: parts.join("") + end };
}

export function* fuzzCorpus(
  seed: number,
  count: number,
  gateway: { adminKey: string; mockUrl: string },
): Generator<FuzzRequest> {
  const random = new Random(seed);
  for (let index = 0; index < count; index++) {
    if (random.chance(0.35)) {
      yield controlRequest(random, gateway);
      continue;
    }
    const path = random.pick(INFERENCE_ROUTES);
    const headers = inferenceHeaders(random, gateway);
    if (path === "/v1/models") {
      yield { method: "GET", path, headers, label: `GET ${path}` };
      continue;
    }
    if (MULTIPART_PATHS.has(path) && random.chance(0.7)) {
      const form = hostileForm(random);
      headers["content-type"] = form.contentType;
      yield { method: "POST", path, headers, body: form.body, label: `POST ${path} (form)` };
      continue;
    }
    headers["content-type"] = random.chance(0.95)
      ? "application/json"
      : random.pick(["text/plain", "application/x-www-form-urlencoded"]);
    const body = random.chance(0.1) ? malformed(random) : inferenceBody(random, path.replace("/v1/proxy", ""));
    yield { method: "POST", path, headers, body, label: `POST ${path}` };
  }
}
