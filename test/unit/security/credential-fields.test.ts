import { describe, expect, it } from "vitest";
import { redact } from "../../../core/control/audit.ts";
import { parseCredentialInput } from "../../../core/control/credentials/credentials.ts";
import { SECRET_FIELD_NAMES } from "../../../core/control/credentials/secrets.ts";
import { headerCredentials } from "../../../core/inference/gateway/target-from-headers.ts";
import { MASKED, headersForLog, isForwardable, parseGatewayHeaders } from "../../../core/http/gateway-headers.ts";
import type { ProviderTarget } from "../../../core/providers/types.ts";
import { compileConfig, type LeafNode } from "../../../core/inference/routing/config.ts";
import { parseTrustedHosts } from "../../../core/security/custom-host.ts";
import { isCredentialField, isCredentialHeader } from "../../../core/security/credential-fields.ts";

/**
 * One list of credential names (core/security/credential-fields.ts) hides every credential the providers use,
 * wherever it comes from (config fields, integration configurations, request headers), in audit records and
 * logs. Completeness is checked from what reaches a ProviderTarget: every input whose value lands in a
 * credential slot of the target must be named as a credential.
 */

const trusted = parseTrustedHosts([]);

/** The credential slots of a ProviderTarget (what the adapters send as secrets). */
function credentialValues(target: Pick<ProviderTarget, "apiKey" | "aws" | "vertex">): string[] {
  return [
    target.apiKey,
    target.aws?.accessKeyId,
    target.aws?.secretAccessKey,
    target.aws?.sessionToken,
    target.vertex?.serviceAccountJson,
  ].filter((value): value is string => typeof value === "string");
}

/** Every config field the routing config accepts, each with a value that names it. */
const CONFIG_FIELDS = [
  "api_key",
  "resource_name",
  "deployment_id",
  "api_version",
  "azure_model_name",
  "vertex_project_id",
  "vertex_region",
  "vertex_service_account_json",
  "aws_access_key_id",
  "aws_secret_access_key",
  "aws_session_token",
  "aws_region",
];
const sampleValue = (field: string) =>
  field.endsWith("region")
    ? field.startsWith("aws")
      ? "us-east-1"
      : "us-central1"
    : `value-of-${field.replace(/_/g, "-")}`;

describe("the shared credential field list", () => {
  it("names every config field whose value becomes a provider credential (snake_case and camelCase)", () => {
    const raw = Object.fromEntries(CONFIG_FIELDS.map((field) => [field, sampleValue(field)]));
    const leaf = compileConfig({ provider: "bedrock", ...raw }, trusted) as LeafNode;
    const secrets = credentialValues(leaf);
    expect(secrets.length).toBe(5);
    for (const field of CONFIG_FIELDS) {
      const isSecret = secrets.includes(sampleValue(field));
      expect(isCredentialField(field), field).toBe(isSecret);
      const camel = field.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
      expect(isCredentialField(camel), camel).toBe(isSecret);
    }
  });

  it("names every header whose value becomes a provider credential", () => {
    const names = [
      "azure-resource-name",
      "azure-deployment-id",
      "azure-api-version",
      "azure-model-name",
      "vertex-project-id",
      "vertex-region",
      "vertex-service-account-json",
      "aws-access-key-id",
      "aws-secret-access-key",
      "aws-session-token",
      "aws-region",
    ];
    const headers = new Headers(
      Object.fromEntries(names.map((name) => [`x-gateway-${name}`, sampleValue(name.replace(/-/g, "_"))])),
    );
    headers.set("authorization", "Bearer value-of-authorization");
    const target = headerCredentials(headers, parseGatewayHeaders(headers));
    const secrets = credentialValues(target);
    expect(secrets.length).toBe(5);
    for (const [name, value] of headers) {
      expect(isCredentialHeader(name), name).toBe(secrets.includes(value.replace(/^Bearer /, "")));
    }
  });

  it("names every secret an integration seals", async () => {
    const { secrets } = await parseCredentialInput(
      {
        key: "value-of-key",
        configurations: Object.fromEntries(
          CONFIG_FIELDS.filter((f) => f !== "api_key").map((f) => [f, sampleValue(f)]),
        ),
      },
      trusted,
    );
    const sealed = Object.keys(secrets).map((name) => SECRET_FIELD_NAMES[name as keyof typeof SECRET_FIELD_NAMES]);
    expect(sealed.sort()).toEqual(
      ["key", "vertex_service_account_json", "aws_access_key_id", "aws_secret_access_key", "aws_session_token"].sort(),
    );
    for (const name of sealed) expect(isCredentialField(name), name).toBe(true);
  });

  it("audit redaction hides every credential field, AWS-prefixed ones included, at any depth", () => {
    const record = {
      name: "visible",
      config: {
        targets: [
          Object.fromEntries(CONFIG_FIELDS.map((field) => [field, sampleValue(field)])),
          { awsSecretAccessKey: "value-of-camel", vertexServiceAccountJson: { private_key: "value-of-pk" } },
        ],
      },
    };
    const text = JSON.stringify(redact(record));
    for (const field of ["api_key", "aws_access_key_id", "aws_secret_access_key", "aws_session_token"]) {
      expect(text).not.toContain(sampleValue(field));
    }
    expect(text).not.toContain(sampleValue("vertex_service_account_json"));
    expect(text).not.toContain("value-of-camel");
    expect(text).not.toContain("value-of-pk");
    expect(text).toContain("visible");
    expect(text).toContain("us-east-1");
  });

  it("log masking hides the same fields in headers and inside an inline config", () => {
    const config = Object.fromEntries(CONFIG_FIELDS.map((field) => [field, sampleValue(field)]));
    const logged = headersForLog(
      new Headers({
        "x-gateway-config": JSON.stringify(config),
        "x-gateway-aws-secret-access-key": "value-of-header-secret",
        "x-portkey-aws-session-token": "value-of-header-token",
        "x-gateway-vertex-service-account-json": "value-of-header-sa",
        "x-api-key": "value-of-x-api-key",
      }),
    );
    const text = JSON.stringify(logged);
    for (const value of ["value-of-header-secret", "value-of-header-token", "value-of-header-sa", "value-of-x-api-key"])
      expect(text).not.toContain(value);
    const loggedConfig = JSON.parse(logged["x-gateway-config"]!);
    for (const field of CONFIG_FIELDS) {
      expect(loggedConfig[field] === MASKED, field).toBe(isCredentialField(field));
    }
  });
});

describe("x-gateway-forward-headers deny list", () => {
  it("never forwards credentials, the gateway's own headers or hop-by-hop headers", () => {
    for (const name of [
      "x-gateway-api-key",
      "X-Portkey-Api-Key",
      "x-gateway-config",
      "x-portkey-virtual-key",
      "authorization",
      "Cookie",
      "x-api-key",
      "api-key",
      "x-goog-api-key",
      "proxy-authorization",
      "host",
      "content-length",
    ]) {
      expect(isForwardable(name), name).toBe(false);
    }
    for (const name of ["x-team", "X-Request-Source", "anthropic-beta", "openai-organization"]) {
      expect(isForwardable(name), name).toBe(true);
    }
    const parsed = parseGatewayHeaders(
      new Headers({ "x-gateway-forward-headers": "x-team, x-gateway-api-key, cookie, x-api-key, authorization" }),
    );
    expect(parsed.forwardHeaders).toEqual(["x-team"]);
  });
});
