import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { REPO_DIR } from "./proc.ts";

/**
 * Reads a V8 .cpuprofile (written by `node --cpu-prof`) and sums self time per function and per area
 * (a package under node_modules, a core/ folder, Node's internals, GC). Idle time is left out of the shares.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileEntry {
  name: string;
  where: string;
  area: string;
  selfMs: number;
  /** Share of the non-idle sampled time. */
  share: number;
}

export interface ProfileSummary {
  file: string;
  /** Non-idle sampled time, ms. */
  busyMs: number;
  idleMs: number;
  functions: ProfileEntry[];
  areas: Array<{ area: string; selfMs: number; share: number }>;
  /**
   * Inclusive time (self + callees) of the repo's own functions (core/, bench/ excluded) and of a few entry
   * points of libraries: where the time goes per pipeline step, which self time alone cannot show.
   */
  inclusive: ProfileEntry[];
}

/** Library functions worth an inclusive figure (matched by function name and area). */
const INCLUSIVE_LIBRARY_FRAMES = new Set([
  "fetch@node:deps/undici",
  "getRequestListener@@hono/node-server",
  "responseViaResponseObject@@hono/node-server",
  "safeParse@zod",
  "parse@zod",
  "dispatch@hono",
]);

export function latestProfile(dir: string): string | undefined {
  // One file per thread (`CPU.<date>.<time>.<pid>.<thread>.<seq>`): the main thread is thread 0.
  const files = readdirSync(dir)
    .filter((file) => file.endsWith(".cpuprofile"))
    .sort((a, b) => Number(a.split(".")[4] === "0") - Number(b.split(".")[4] === "0") || a.localeCompare(b));
  return files.length > 0 ? join(dir, files[files.length - 1]!) : undefined;
}

const BUNDLE_AREA = "gateway (bundle)";

function areaOf(url: string, name: string): string {
  if (name === "(garbage collector)") return "GC";
  if (name === "(program)") return "(program: native, not attributed)";
  if (!url) return "(native / builtins)";
  if (url.startsWith("node:")) {
    const module = url.slice(5).replace(/^internal\//, "");
    const top = module.split("/")[0]!;
    return `node:${top === "deps" ? module.split("/").slice(0, 2).join("/") : top}`;
  }
  const path = url.startsWith("file://") ? decodeURIComponent(new URL(url).pathname) : url;
  // The benchmark's gateway is one esbuild bundle in node_modules/.cache (scripts/build.ts): the gateway's code.
  if (path.includes("node_modules/.cache/")) return BUNDLE_AREA;
  const nm = path.lastIndexOf("node_modules/");
  if (nm !== -1) {
    const rest = path.slice(nm + "node_modules/".length).split("/");
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const rel = relative(REPO_DIR, path);
  if (!rel.startsWith("..")) {
    const parts = rel.split("/");
    return parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  return path;
}

function shortWhere(url: string, line: number): string {
  if (!url) return "";
  const path = url.startsWith("file://") ? decodeURIComponent(new URL(url).pathname) : url;
  const nm = path.lastIndexOf("node_modules/");
  const shown =
    nm !== -1 ? path.slice(nm + "node_modules/".length) : path.startsWith(REPO_DIR) ? relative(REPO_DIR, path) : path;
  return `${shown}:${line + 1}`;
}

export function summariseProfile(file: string, top = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  for (const node of profile.nodes) byId.set(node.id, node);
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    // timeDeltas[i] is the time since the previous sample: attribute the interval ending at sample i to it.
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const functions = new Map<string, { name: string; where: string; area: string; us: number }>();
  const areas = new Map<string, number>();
  let idleUs = 0;
  let busyUs = 0;
  for (const [id, us] of selfUs) {
    const { callFrame } = byId.get(id)!;
    const name = callFrame.functionName || "(anonymous)";
    if (name === "(idle)") {
      idleUs += us;
      continue;
    }
    busyUs += us;
    const area = areaOf(callFrame.url, name);
    const where = shortWhere(callFrame.url, callFrame.lineNumber);
    const key = `${name}@${where}`;
    const entry = functions.get(key) ?? { name, where, area, us: 0 };
    entry.us += us;
    functions.set(key, entry);
    areas.set(area, (areas.get(area) ?? 0) + us);
  }
  // Inclusive time: every distinct frame on a sample's stack gets the sample's interval.
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const inclusive = new Map<string, { name: string; where: string; area: string; us: number }>();
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    const leaf = byId.get(profile.samples[i]!);
    if (!leaf || leaf.callFrame.functionName === "(idle)") continue;
    const seen = new Set<string>();
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const { callFrame } = byId.get(id)!;
      const name = callFrame.functionName || "(anonymous)";
      const area = areaOf(callFrame.url, name);
      const own = area === BUNDLE_AREA || area.startsWith("core/") || area.startsWith("functions");
      if (!own && !INCLUSIVE_LIBRARY_FRAMES.has(`${name}@${area}`)) continue;
      const where = shortWhere(callFrame.url, callFrame.lineNumber);
      const key = `${name}@${where}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const entry = inclusive.get(key) ?? { name, where, area, us: 0 };
      entry.us += delta;
      inclusive.set(key, entry);
    }
  }
  const share = (us: number) => (busyUs > 0 ? us / busyUs : 0);
  /** The `top` entries with the most time, as the summary lists them. */
  const topFunctions = (entries: Map<string, { name: string; where: string; area: string; us: number }>) =>
    [...entries.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((entry) => ({
        name: entry.name,
        where: entry.where,
        area: entry.area,
        selfMs: entry.us / 1000,
        share: share(entry.us),
      }));
  return {
    inclusive: topFunctions(inclusive),
    file,
    busyMs: busyUs / 1000,
    idleMs: idleUs / 1000,
    functions: topFunctions(functions),
    areas: [...areas.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([area, us]) => ({ area, selfMs: us / 1000, share: share(us) })),
  };
}

export function formatProfile(summary: ProfileSummary): string {
  const pct = (value: number) => `${(value * 100).toFixed(1).padStart(5)}%`;
  const lines = [
    `CPU profile ${summary.file}`,
    `  busy ${summary.busyMs.toFixed(0)} ms sampled (idle ${summary.idleMs.toFixed(0)} ms left out)`,
    "  Top self time by function:",
    ...summary.functions.map(
      (entry) =>
        `  ${pct(entry.share)}  ${entry.selfMs.toFixed(0).padStart(7)} ms  ${entry.name}  ${entry.where ? `(${entry.where})` : ""}`,
    ),
    "  Self time by area:",
    ...summary.areas.map((entry) => `  ${pct(entry.share)}  ${entry.selfMs.toFixed(0).padStart(7)} ms  ${entry.area}`),
    "  Inclusive time (self + callees) of the gateway's own functions and library entry points:",
    ...summary.inclusive.map(
      (entry) =>
        `  ${pct(entry.share)}  ${entry.selfMs.toFixed(0).padStart(7)} ms  ${entry.name}  ${entry.where ? `(${entry.where})` : ""}`,
    ),
  ];
  return lines.join("\n");
}

if (import.meta.main) {
  const target = process.argv[2];
  if (!target) throw new Error("usage: node bench/lib/profile.ts <file.cpuprofile | dir>");
  const file = target.endsWith(".cpuprofile") ? target : latestProfile(target);
  if (!file) throw new Error(`no .cpuprofile in ${target}`);
  console.log(formatProfile(summariseProfile(file, Number(process.argv[3] ?? 30))));
}
