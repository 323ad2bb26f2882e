import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpError } from "../../../core/http/errors.ts";
import { parseTrustedHosts } from "../../../core/security/custom-host.ts";
import { SIDE_ANSWER_MAX_BYTES, guardedFetch } from "../../../core/security/guarded-dispatcher.ts";

/**
 * The guarded fetch behind side requests (JWKS, OAuth and OIDC metadata, token endpoints) and SDK transports
 * (MCP, A2A): every answer is bounded, 1 MB unless the caller says otherwise, so a hostile JWKS or token
 * endpoint cannot make the gateway buffer what it sends.
 */

let server: Server;
let base: string;
const trusted = parseTrustedHosts(["127.0.0.1"]);

beforeAll(async () => {
  server = createServer((req, res) => {
    const size = Number(new URL(req.url ?? "/", "http://x").searchParams.get("bytes"));
    // Chunked (no content-length) unless asked: the bound must hold while reading, not only on the header.
    res.writeHead(200, {
      "content-type": "application/json",
      ...(req.url?.includes("declared") ? { "content-length": String(size + 2) } : {}),
    });
    res.end(`"${"k".repeat(size)}"`);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

const tooLarge = (error: unknown) => error instanceof HttpError && error.code === "upstream_response_too_large";

describe("guardedFetch", () => {
  it("reads an answer within the side-request limit", async () => {
    const answer = await guardedFetch(trusted)(`${base}/?bytes=1000`);
    expect((await answer.json()).length).toBe(1000);
  });

  it("refuses an answer past 1 MB, declared or not, with 502 upstream_response_too_large", async () => {
    const chunked = await guardedFetch(trusted)(`${base}/?bytes=${SIDE_ANSWER_MAX_BYTES + 10}`);
    const read = await chunked.json().catch((error: unknown) => error);
    expect(tooLarge(read)).toBe(true);
    expect((read as HttpError).status).toBe(502);
    const declared = await guardedFetch(trusted)(`${base}/declared?bytes=${SIDE_ANSWER_MAX_BYTES + 10}`).catch(
      (error: unknown) => error,
    );
    expect(tooLarge(declared)).toBe(true);
  });

  it("takes the caller's limit and tells it when an answer passes it", async () => {
    const seen: Error[] = [];
    const fetchSmall = guardedFetch(trusted, {
      maxBytes: 100,
      what: "The test's answer",
      onTooLarge: (e) => seen.push(e),
    });
    const read = await (await fetchSmall(`${base}/?bytes=500`)).text().catch((error: unknown) => error);
    expect(tooLarge(read)).toBe(true);
    expect((read as Error).message).toBe("The test's answer is larger than the limit of 100 bytes.");
    expect(seen).toHaveLength(1);
  });
});
