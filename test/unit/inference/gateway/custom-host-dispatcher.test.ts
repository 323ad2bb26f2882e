import { createServer, type Server } from "node:http";
import { lookup as dnsLookup } from "node:dns/promises";
import type { AddressInfo } from "node:net";
import { hostname } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requestUpstream } from "../../../../core/providers/upstream/client.ts";
import { CustomHostBlockedError, guardedLookup, parseTrustedHosts } from "../../../../core/security/custom-host.ts";
import { guardedDispatcher } from "../../../../core/security/guarded-dispatcher.ts";

/** DNS rebinding: the address a custom host name resolves to is re-checked when the connection is made. */

let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((_req, res) => res.end("reached"));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const lookup = (trusted: string[], host: string, all = true) =>
  new Promise<{ error: Error | null; address: unknown }>((resolve) =>
    guardedLookup(parseTrustedHosts(trusted))(host, { all }, (error, address) => resolve({ error, address })),
  );

describe("connect-time address checks", () => {
  it("refuses internal names and names that resolve to private addresses, unless trusted", async () => {
    const internal = await lookup([], "localhost");
    expect(internal.error).toBeInstanceOf(CustomHostBlockedError);
    // The machine's own name resolves to a loopback or private address on test machines and CI containers.
    const own = hostname();
    const resolved = await dnsLookup(own).catch(() => undefined);
    if (resolved && /^(127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|::1$|f[cd])/.test(resolved.address)) {
      const blocked = await lookup([], own);
      expect(blocked.error).toBeInstanceOf(CustomHostBlockedError);
      expect(blocked.error!.message).toContain(resolved.address);
      expect((await lookup([resolved.address], own)).error).toBeNull();
    }
    expect((await lookup(["localhost"], "localhost")).address).toEqual(
      expect.arrayContaining([expect.objectContaining({ address: expect.any(String) })]),
    );
    const single = await lookup(["localhost"], "localhost", false);
    expect(typeof single.address).toBe("string");
  });

  it("makes the upstream call fail before connecting, as a 400 the fallback can move past", async () => {
    const error = await requestUpstream(
      { url: `http://localhost:${port}/`, method: "GET", headers: {} },
      { timeoutMs: 5000, signal: new AbortController().signal, trusted: parseTrustedHosts([]) },
    ).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 400, code: "invalid_custom_host", transport: true });
  });

  it("connects when the resolved address is trusted, and reuses one pool per trust list", async () => {
    const trusted = parseTrustedHosts(["localhost"]);
    const dispatcher = await guardedDispatcher(trusted);
    expect(guardedDispatcher(trusted)).toBe(dispatcher);
    const call = await requestUpstream(
      { url: `http://localhost:${port}/`, method: "GET", headers: {} },
      { timeoutMs: 5000, signal: new AbortController().signal, trusted },
    );
    expect(await call.text()).toBe("reached");
  });
});
