import { Sha256 } from "@aws-crypto/sha256-js";
import { SignatureV4 } from "@smithy/signature-v4";
import { describe, expect, it } from "vitest";
import { type SigningCredentials, signRequest } from "../../../core/platform/aws/sigv4.ts";

/** What @smithy/signature-v4 (the SDK's signer) makes of the same request: the reference for ours. */
async function referenceHeaders(
  url: URL,
  headers: Record<string, string>,
  body: string,
  credentials: SigningCredentials,
  date: Date,
): Promise<Record<string, string>> {
  const signer = new SignatureV4({
    service: "dynamodb",
    region: "eu-west-1",
    sha256: Sha256,
    credentials,
    applyChecksum: false,
  });
  const signed = await signer.sign(
    {
      method: "POST",
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query: {},
      headers: { ...headers, host: url.host },
      body,
    },
    { signingDate: date },
  );
  return Object.fromEntries(Object.entries(signed.headers).map(([name, value]) => [name.toLowerCase(), value]));
}

const scope = { region: "eu-west-1", service: "dynamodb" };
const date = new Date("2026-03-04T05:06:07.890Z");
const body = JSON.stringify({ TableName: "gateway", Key: { pk: { S: "a b" }, sk: { S: "é" } } });
const headers = { "content-type": "application/x-amz-json-1.0", "x-amz-target": "DynamoDB_20120810.GetItem" };

describe("signRequest (SigV4)", () => {
  it("signs as the SDK's signer does", async () => {
    const credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
    const url = new URL("https://dynamodb.eu-west-1.amazonaws.com");
    const ours = signRequest({ method: "POST", url, headers, body }, scope, credentials, date);
    expect(ours).toEqual(await referenceHeaders(url, headers, body, credentials, date));
    expect(ours["x-amz-date"]).toBe("20260304T050607Z");
    expect(ours.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20260304\/eu-west-1\/dynamodb\/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=[0-9a-f]{64}$/,
    );
  });

  it("signs the session token, a port and a path like the SDK's signer", async () => {
    const credentials = { accessKeyId: "ASIAEXAMPLE", secretAccessKey: "secret", sessionToken: "token/with+chars=" };
    const url = new URL("http://127.0.0.1:8000/prefix/a%20b");
    const ours = signRequest({ method: "POST", url, headers, body }, scope, credentials, date);
    expect(ours).toEqual(await referenceHeaders(url, headers, body, credentials, date));
    expect(ours.authorization).toContain(
      "SignedHeaders=content-type;host;x-amz-date;x-amz-security-token;x-amz-target",
    );
  });

  it("keeps signing correctly when the day (and so the derived key) changes", async () => {
    const credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" };
    const url = new URL("https://dynamodb.eu-west-1.amazonaws.com");
    for (const day of [date, new Date("2026-03-05T00:00:01Z"), date]) {
      const ours = signRequest({ method: "POST", url, headers, body }, scope, credentials, day);
      expect(ours).toEqual(await referenceHeaders(url, headers, body, credentials, day));
    }
  });
});
