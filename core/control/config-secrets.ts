import { isProviderCredentialField } from "../security/credential-fields.ts";
import type { Secrets } from "../store/ports.ts";
import { maskSecret } from "./provider-credentials.ts";

/**
 * Provider credentials inside saved configs (`api_key`, `aws_secret_access_key`, `vertex_service_account_json`...
 * on any target of the tree) are stored sealed through the Secrets port, as integrations' are: each becomes
 * `{"$sealed": <ciphertext>, "hint": <masked>}`. Views (GET, list, versions, audit) show the hint; routing opens
 * them (once per config version, saved-resources.ts). Configs saved before this are read as they are (legacy
 * plaintext): usable, shown masked, sealed at their next update.
 */

interface SealedValue {
  $sealed: string;
  hint: string;
}

type ConfigNode = Record<string, unknown>;

function isSealed(value: unknown): value is SealedValue {
  return typeof value === "object" && value !== null && typeof (value as SealedValue).$sealed === "string";
}

/** A value as clients see it: the hint of a sealed one, a masked plaintext one. */
function hintOf(value: unknown): string {
  if (isSealed(value)) return value.hint;
  return typeof value === "string" ? maskSecret(value) : "********";
}

/** What GET shows for a credential and a client may send back unchanged on update. */
const looksMasked = (value: unknown) => typeof value === "string" && value.includes("********");

/**
 * Calls `visit` on every config node (the root and its targets, nested), with the node at the same place in
 * `previous` when there is one. Params, queries and other user data below a node are not nodes.
 */
async function eachNode(
  node: unknown,
  previous: unknown,
  visit: (node: ConfigNode, previous: ConfigNode | undefined) => Promise<ConfigNode>,
): Promise<unknown> {
  if (typeof node !== "object" || node === null || Array.isArray(node)) return node;
  const before = typeof previous === "object" && previous !== null ? (previous as ConfigNode) : undefined;
  const out = await visit({ ...(node as ConfigNode) }, before);
  if (Array.isArray(out.targets)) {
    const previousTargets = Array.isArray(before?.targets) ? before.targets : [];
    out.targets = await Promise.all(
      out.targets.map((target, index) => eachNode(target, previousTargets[index], visit)),
    );
  }
  return out;
}

/**
 * The config as stored: every provider credential sealed. A credential sent back masked (as GET showed it)
 * keeps the value stored at the same place in `previous` (the config being updated).
 */
export async function sealConfigSecrets(
  secrets: Secrets,
  config: Record<string, unknown>,
  previous?: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  return (await eachNode(config, previous, async (node, before) => {
    for (const [key, value] of Object.entries(node)) {
      if (!isProviderCredentialField(key) || value === undefined || value === null || isSealed(value)) continue;
      const kept = before?.[key];
      if (looksMasked(value) && kept !== undefined && hintOf(kept) === value) {
        node[key] = isSealed(kept) ? kept : await seal(secrets, kept);
        continue;
      }
      node[key] = await seal(secrets, value);
    }
    return node;
  })) as Record<string, unknown>;
}

async function seal(secrets: Secrets, value: unknown): Promise<SealedValue> {
  const hint = typeof value === "string" ? maskSecret(value) : "********";
  return { $sealed: await secrets.encrypt(JSON.stringify(value)), hint };
}

/** The config routing runs: sealed credentials opened (legacy plaintext ones are already open). */
export async function openConfigSecrets(
  secrets: Secrets,
  config: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  if (!hasSealed(config)) return config;
  return (await eachNode(config, undefined, async (node) => {
    for (const [key, value] of Object.entries(node)) {
      if (isSealed(value)) node[key] = JSON.parse(await secrets.decrypt(value.$sealed));
    }
    return node;
  })) as Record<string, unknown>;
}

/** The config as views show it: every provider credential (sealed or legacy plaintext) as its masked hint. */
export function maskConfigSecrets(config: unknown): unknown {
  if (typeof config !== "object" || config === null || Array.isArray(config)) return config;
  const node: ConfigNode = { ...(config as ConfigNode) };
  for (const [key, value] of Object.entries(node)) {
    if (isProviderCredentialField(key) && value !== undefined && value !== null) node[key] = hintOf(value);
  }
  if (Array.isArray(node.targets)) node.targets = node.targets.map(maskConfigSecrets);
  return node;
}

/** Whether any node of the config holds a sealed credential (most configs hold none: nothing to open). */
function hasSealed(config: unknown): boolean {
  if (typeof config !== "object" || config === null) return false;
  const node = config as ConfigNode;
  for (const value of Object.values(node)) if (isSealed(value)) return true;
  return Array.isArray(node.targets) && node.targets.some(hasSealed);
}
