import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parseSessionTags } from "../../../core/inference/gateway/aws-session-tags.ts";
import { HttpError } from "../../../core/http/errors.ts";
import { assumeRole, assumeRoleForm, clearAssumedRoles } from "../../../core/providers/bedrock/assume-role.ts";
import { signingCredentials } from "../../../core/providers/bedrock/http.ts";
import { signRequest } from "../../../core/providers/bedrock/sigv4.ts";
import { type TransformContext, UpstreamError } from "../../../core/providers/types.ts";
import { parseTrustedHosts } from "../../../core/security/custom-host.ts";
import { type StsMock, startStsMock } from "../../mocks/sts.ts";

/** STS AssumeRole with per-request session tags for Bedrock (spec 5.2), against a mock of the STS Query API. */

const ROLE = "arn:aws:iam::123456789012:role/bedrock-invoke";
const BASE = { accessKeyId: "AKIDBASEEXAMPLE", secretAccessKey: "base-secret-key" };
const trusted = parseTrustedHosts(["127.0.0.1"]);
let sts: StsMock;

beforeAll(async () => {
  sts = await startStsMock();
  sts.roles.set(ROLE, { externalId: "tenant-42" });
});
afterAll(() => sts?.close());
beforeEach(() => {
  clearAssumedRoles();
  sts.calls.length = 0;
});

const request = (sessionTags?: Record<string, string>) => ({
  roleArn: ROLE,
  externalId: "tenant-42",
  sessionTags,
  region: "us-east-1",
  base: BASE,
});

describe("assumeRole", () => {
  it("passes the session tags and external id, and reads the temporary credentials", async () => {
    const credentials = await assumeRole(request({ team: "search", cost_center: "cc-7" }), {
      endpoint: sts.url,
      trusted,
    });
    expect(credentials).toMatchObject({
      accessKeyId: "ASIAMOCK00000001",
      secretAccessKey: "mock-session-secret-1",
      sessionToken: "mock-session-token-1&more",
    });
    expect(credentials.expiresAt).toBeGreaterThan(Date.now());
    const form = sts.calls[0]!;
    expect(Object.fromEntries(form)).toMatchObject({
      Action: "AssumeRole",
      Version: "2011-06-15",
      RoleArn: ROLE,
      ExternalId: "tenant-42",
      "Tags.member.1.Key": "team",
      "Tags.member.1.Value": "search",
      "Tags.member.2.Key": "cost_center",
      "Tags.member.2.Value": "cc-7",
    });
  });

  it("caches per role and tag set", async () => {
    const first = await assumeRole(request({ team: "search" }), { endpoint: sts.url, trusted });
    const again = await assumeRole(request({ team: "search" }), { endpoint: sts.url, trusted });
    expect(again.accessKeyId).toBe(first.accessKeyId);
    expect(sts.calls).toHaveLength(1);
    const otherTags = await assumeRole(request({ team: "ads" }), { endpoint: sts.url, trusted });
    expect(otherTags.accessKeyId).not.toBe(first.accessKeyId);
    expect(sts.calls).toHaveLength(2);
    // Near expiry (within 5 minutes), a new session is asked for.
    await assumeRole(request({ team: "search" }), { endpoint: sts.url, trusted, now: () => Date.now() + 11 * 60_000 });
    expect(sts.calls).toHaveLength(3);
  });

  it("answers a refusal as 403 assume_role_failed without quoting STS's message", async () => {
    const error = await assumeRole({ ...request(), externalId: "wrong" }, { endpoint: sts.url, trusted }).catch(
      (caught) => caught,
    );
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ status: 403, code: "assume_role_failed" });
    expect(error.message).toContain("AccessDenied");
    expect(error.message).not.toContain("123456789012");
  });

  it("reaches STS only through the SSRF guard", async () => {
    const error = await assumeRole(request(), { endpoint: sts.url }).catch((caught) => caught);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(sts.calls).toHaveLength(0);
  });

  it("encodes tags as the Query API's Tags.member list", () => {
    expect(assumeRoleForm({ ...request({ "a b": "x=y" }), externalId: undefined })).toContain(
      "Tags.member.1.Key=a+b&Tags.member.1.Value=x%3Dy",
    );
  });
});

describe("signingCredentials", () => {
  const context = (aws: NonNullable<TransformContext["target"]["aws"]>): TransformContext => ({
    target: { provider: "bedrock", aws: { region: "us-east-1", ...aws } },
    route: "chat",
    stream: false,
    model: "anthropic.claude-3-haiku-20240307-v1:0",
    now: 1_700_000_000,
    requestId: "chatcmpl-test",
    includeUsage: false,
    trustedHosts: trusted,
  });

  it("signs Bedrock calls with the assumed role's session when aws_auth_type is assumedRole", async () => {
    const ctx = context({
      ...BASE,
      authType: "assumedRole",
      roleArn: ROLE,
      externalId: "tenant-42",
      sessionTags: { team: "search" },
    });
    const credentials = await signingCredentials(ctx, sts.url);
    expect(credentials.accessKeyId).toMatch(/^ASIAMOCK/);
    const headers = await signRequest(
      {
        url: "https://bedrock-runtime.us-east-1.amazonaws.com/model/m/converse",
        method: "POST",
        headers: {},
        body: "{}",
      },
      "us-east-1",
      credentials,
    );
    expect(headers["x-amz-security-token"]).toBe(credentials.sessionToken);
    expect(headers.authorization).toContain(`Credential=${credentials.accessKeyId}/`);
    expect(headers.authorization).not.toContain(BASE.accessKeyId);
    expect(sts.calls[0]!.get("Tags.member.1.Key")).toBe("team");
  });

  it("keeps the target's own keys otherwise, and checks the role ARN", async () => {
    expect(await signingCredentials(context({ ...BASE, roleArn: ROLE }), sts.url)).toMatchObject(BASE);
    expect(sts.calls).toHaveLength(0);
    await expect(
      signingCredentials(context({ ...BASE, authType: "assumedRole", roleArn: "not-an-arn" }), sts.url),
    ).rejects.toMatchObject({ status: 400, param: "aws_role_arn" });
  });
});

describe("parseSessionTags", () => {
  it("reads a JSON object and refuses what STS would", () => {
    expect(parseSessionTags('{"team":"search","env":"prod"}')).toEqual({ team: "search", env: "prod" });
    expect(parseSessionTags(undefined)).toBeUndefined();
    for (const bad of ["nope", "[]", '{"a":1}', '{"":"x"}', '{"a<b":"x"}', '{"Team":"a","team":"b"}']) {
      const error = (() => {
        try {
          parseSessionTags(bad);
        } catch (caught) {
          return caught;
        }
      })();
      expect(error, bad).toBeInstanceOf(HttpError);
      expect((error as HttpError).param).toBe("x-gateway-aws-session-tags");
    }
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"]));
    expect(() => parseSessionTags(JSON.stringify(many))).toThrow(HttpError);
  });
});
