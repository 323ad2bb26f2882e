import { existsSync, readdirSync, readFileSync } from "node:fs";

/**
 * `node bench/summary.ts [dir]`: one line of bench/README.md's results table per saved run (bench/results/*.json),
 * so a run worth remembering can be added there; the result files themselves stay out of git.
 */

interface Cell {
  target: string;
  mode: string;
  concurrency: number;
  wrk: { rps: number; p99: number };
}

interface SavedRun {
  startedAt: string;
  machine: { git: string };
  config: { rateLimit?: boolean; gatewayStart?: { env?: Record<string, string>; nodeArgs?: string[] } };
  cells: Cell[];
  runs: { target: string; memory?: { rssMb: number } }[];
}

const FLAG_NAMES: [string, string][] = [
  ["--max-semi-space-size=", "semi "],
  ["--heap-growing-percent=", "growth "],
  ["--no-", "no "],
];

export function summaryRow(run: SavedRun): string {
  const cell = (target: string, mode: string, concurrency: number) =>
    run.cells.find((c) => c.target === target && c.mode === mode && c.concurrency === concurrency);
  const ofFloor = (mode: string, concurrency: number) => {
    const gateway = cell("gateway", mode, concurrency);
    const floor = cell("floor", mode, concurrency);
    return gateway && floor ? `${Math.round((100 * gateway.wrk.rps) / floor.wrk.rps)}%` : "–";
  };
  const overPortkey = (mode: string) => {
    const gateway = cell("gateway", mode, 10);
    const portkey = cell("portkey", mode, 10);
    return gateway && portkey ? (gateway.wrk.rps / portkey.wrk.rps).toFixed(1) : "–";
  };
  const p99OverDirect = (mode: string) => {
    const gateway = cell("gateway", mode, 10);
    const direct = cell("direct", mode, 10);
    return gateway && direct ? `+${(gateway.wrk.p99 - direct.wrk.p99).toFixed(1)}` : "–";
  };
  const rss = run.runs.find((r) => r.target === "gateway")?.memory?.rssMb;
  const start = run.config.gatewayStart;
  const flags = [
    ...(start?.env?.MALLOC_ARENA_MAX ? [`arenas ${start.env.MALLOC_ARENA_MAX}`] : []),
    ...(start?.nodeArgs ?? []).map((arg) => FLAG_NAMES.reduce((text, [flag, name]) => text.replace(flag, name), arg)),
    ...(run.config.rateLimit ? [] : ["no rate limit"]),
  ];
  const [commit] = run.machine.git.split(" ");
  const dirty = run.machine.git.includes("+") ? "+" : "";
  return [
    "",
    run.startedAt.slice(0, 16).replace("T", " "),
    `\`${commit}\`${dirty}`,
    `${ofFloor("json", 10)} / ${ofFloor("json", 64)}`,
    `${ofFloor("stream", 10)} / ${ofFloor("stream", 64)}`,
    `${p99OverDirect("json")} / ${p99OverDirect("stream")}`,
    rss === undefined ? "–" : String(Math.round(rss)),
    `${overPortkey("json")} / ${overPortkey("stream")}`,
    flags.join(", ") || "none",
    "",
  ]
    .join(" | ")
    .trim();
}

if (import.meta.main) {
  const dir = process.argv[2] ?? new URL("./results", import.meta.url).pathname;
  const files = existsSync(dir) ? readdirSync(dir).filter((file) => file.endsWith(".json")) : [];
  if (files.length === 0) console.log(`no saved runs in ${dir} (npm run bench writes them)`);
  for (const file of files.sort()) {
    const run = JSON.parse(readFileSync(`${dir}/${file}`, "utf8")) as SavedRun;
    console.log(summaryRow(run));
  }
}
