import type { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import type { SSMClient } from "@aws-sdk/client-ssm";
import { type SecretRef, SecretRefError, type SecretResolver } from "../../store/secret-refs.ts";

/**
 * Secret references on the AWS platform: `secretsmanager:` through GetSecretValue (the secret string, or one
 * field of it when the reference has `#key`) and `ssm:` through GetParameter with decryption. The clients are
 * loaded on first use (their own chunk: most requests never resolve a reference). Only names under the naming
 * prefix (GATEWAY_SECRET_REF_PREFIX, which infra also scopes the IAM permissions to) are admitted, here, before
 * AWS would deny them; without a prefix no reference is (the functions' role may read other secrets).
 */
export interface AwsSecretClients {
  secretsManager(): Promise<SecretsManagerClient>;
  ssm(): Promise<SSMClient>;
}

export class AwsSecretResolver implements SecretResolver {
  readonly #clients: AwsSecretClients;
  readonly #prefix: string;

  constructor(clients: AwsSecretClients, options: { prefix?: string } = {}) {
    this.#clients = clients;
    this.#prefix = options.prefix ?? "";
  }

  admit(ref: SecretRef): void {
    if (ref.scheme === "secretsmanager")
      // An ARN's name is after `:secret:`; AWS appends a random suffix to it, the prefix is at its start anyway.
      this.#checkPrefix(ref.id.startsWith("arn:") ? afterMarker(ref.id, ":secret:") : ref.id, "secretsmanager:");
    else if (ref.scheme === "ssm")
      this.#checkPrefix(
        ref.name.startsWith("arn:") ? afterMarker(ref.name, ":parameter/") : ref.name.replace(/^\//, ""),
        "ssm:",
      );
    else throw new SecretRefError("unsupported", `${ref.scheme}: references are for the local platform.`);
  }

  async resolve(ref: SecretRef): Promise<string> {
    this.admit(ref);
    if (ref.scheme === "secretsmanager") return this.#secret(ref.id, ref.jsonKey);
    return this.#parameter((ref as { name: string }).name);
  }

  #checkPrefix(name: string, kind: string): void {
    if (!this.#prefix)
      throw new SecretRefError("unsupported", `${kind} references need GATEWAY_SECRET_REF_PREFIX to be set.`);
    if (!name.startsWith(this.#prefix))
      throw new SecretRefError("invalid", `${kind} references must name secrets under the configured prefix.`);
  }

  async #secret(id: string, jsonKey: string | undefined): Promise<string> {
    const { GetSecretValueCommand } = await import("@aws-sdk/client-secrets-manager");
    const client = await this.#clients.secretsManager();
    let text: string;
    try {
      const answer = await client.send(new GetSecretValueCommand({ SecretId: id }));
      text = answer.SecretString ?? (answer.SecretBinary ? Buffer.from(answer.SecretBinary).toString("utf8") : "");
    } catch (error) {
      throw failure(error, "secretsmanager:");
    }
    if (jsonKey === undefined) return nonEmpty(text, "secretsmanager:");
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new SecretRefError(
        "invalid",
        "The secret of the secretsmanager: reference is not JSON, so it has no #key.",
      );
    }
    const field =
      typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>)[jsonKey] : undefined;
    if (field === undefined || field === null)
      throw new SecretRefError("not_found", "The JSON key of the secretsmanager: reference is not in the secret.");
    // A nested object (a service account inside a larger secret) is passed on as JSON.
    return nonEmpty(typeof field === "string" ? field : JSON.stringify(field), "secretsmanager:");
  }

  async #parameter(name: string): Promise<string> {
    const { GetParameterCommand } = await import("@aws-sdk/client-ssm");
    const client = await this.#clients.ssm();
    try {
      const answer = await client.send(new GetParameterCommand({ Name: name, WithDecryption: true }));
      return nonEmpty(answer.Parameter?.Value ?? "", "ssm:");
    } catch (error) {
      throw failure(error, "ssm:");
    }
  }
}

/** The part of an ARN after `marker`; empty (so never under a prefix) when the ARN has no such part. */
function afterMarker(arn: string, marker: string): string {
  const at = arn.indexOf(marker);
  return at === -1 ? "" : arn.slice(at + marker.length);
}

function nonEmpty(value: string, kind: string): string {
  if (!value) throw new SecretRefError("not_found", `The ${kind} reference's secret is empty.`);
  return value;
}

const NOT_FOUND = new Set(["ResourceNotFoundException", "ParameterNotFound", "ParameterVersionNotFound"]);
const DENIED = new Set(["AccessDeniedException", "AccessDenied", "DecryptionFailure", "KMSAccessDeniedException"]);

/** The AWS error as a SecretRefError: the error's name only (AWS messages may quote the ARN). */
function failure(error: unknown, kind: string): SecretRefError {
  if (error instanceof SecretRefError) return error;
  const name = (error as { name?: string })?.name ?? "";
  if (NOT_FOUND.has(name)) return new SecretRefError("not_found", `The ${kind} reference's secret does not exist.`);
  if (DENIED.has(name))
    return new SecretRefError("not_found", `The gateway may not read the ${kind} reference's secret (${name}).`);
  return new SecretRefError(
    "unavailable",
    `The ${kind} reference could not be resolved (${name || "network error"}).`,
    {
      cause: error,
    },
  );
}
