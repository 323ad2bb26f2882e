import { Resolver } from "node:dns/promises";
import { TtlCache } from "../../../util/ttl-cache.ts";

/**
 * Whether host names resolve in DNS, for `default.validUrls` with `onlyDNS`: a lookup only (A, then AAAA),
 * never a connection. Queries go over c-ares (Resolver), not the libuv thread pool `dns.lookup` would hold,
 * each bounded in time and cancelled with the check. Answers are cached a while: an answer's hosts repeat.
 */

const QUERY_TIMEOUT_MS = 1_500;
const CONCURRENT_QUERIES = 4;
const FOUND_TTL_MS = 10 * 60_000;
const NOT_FOUND_TTL_MS = 60_000;

/** The name does not exist (or cannot be a name). */
const NO_SUCH_NAME = new Set(["ENOTFOUND", "ENONAME", "EBADNAME"]);
/** The name exists without records of the type asked for: ask for the other. */
const NO_RECORDS = "ENODATA";

const answers = new TtlCache<string, boolean>({ ttlMs: FOUND_TTL_MS, maxEntries: 5_000 });

/** Per host: true resolves, false does not exist; throws when DNS could not tell (timeout, no server). */
export async function resolveHosts(hosts: readonly string[], signal: AbortSignal): Promise<Map<string, boolean>> {
  const results = new Map<string, boolean>();
  const pending = hosts.filter((host) => {
    const known = answers.get(host);
    if (known !== undefined) results.set(host, known);
    return known === undefined;
  });
  if (pending.length === 0) return results;
  const resolver = new Resolver({ timeout: QUERY_TIMEOUT_MS, tries: 1 });
  const cancel = () => resolver.cancel();
  signal.addEventListener("abort", cancel, { once: true });
  try {
    let next = 0;
    const worker = async () => {
      while (next < pending.length) {
        signal.throwIfAborted();
        const host = pending[next++]!;
        const found = await resolves(resolver, host);
        answers.set(host, found, found ? FOUND_TTL_MS : NOT_FOUND_TTL_MS);
        results.set(host, found);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENT_QUERIES, pending.length) }, worker));
    signal.throwIfAborted();
    return results;
  } finally {
    signal.removeEventListener("abort", cancel);
  }
}

async function resolves(resolver: Resolver, host: string): Promise<boolean> {
  for (const query of [() => resolver.resolve4(host), () => resolver.resolve6(host)]) {
    try {
      if ((await query()).length > 0) return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? "";
      if (NO_SUCH_NAME.has(code)) return false;
      if (code !== NO_RECORDS) throw new Error(`DNS could not tell whether ${host} exists (${code || "error"})`);
    }
  }
  return false;
}
