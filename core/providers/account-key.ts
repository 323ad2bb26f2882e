import { hash } from "node:crypto";
import type { ProviderTarget } from "./types.ts";

/**
 * The key under which a file's copy at a provider is linked (StoredFile.providerFiles): the provider id and a short
 * hash of what tells one account of it from another (credentials, custom host, Azure resource, AWS and Vertex
 * account), so two accounts at one provider never share file ids. A hash, never the credential: the key is stored
 * in Records unsealed and may appear in answers and logs. 64 bits of SHA-256 tell accounts apart without letting
 * anyone recover a key from it.
 */
export function providerKeyOf(target: ProviderTarget): string {
  const account = [
    target.apiKey ?? "",
    target.customHost ?? "",
    target.azure?.resourceName ?? "",
    target.aws?.accessKeyId ?? "",
    target.aws?.region ?? "",
    target.vertex?.projectId ?? "",
    target.vertex?.region ?? "",
    target.vertex?.serviceAccountJson ?? "",
  ];
  const digest = hash("sha256", JSON.stringify([target.provider, ...account]), "base64url").slice(0, 11);
  return `${target.provider}:${digest}`;
}
