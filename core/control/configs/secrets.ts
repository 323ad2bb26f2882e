import { GUARDRAIL_CONFIG_KEYS } from "../../inference/guardrails/config-guardrails.ts";
import { isProviderCredentialField } from "../../security/credential-fields.ts";
import type { Secrets } from "../../store/ports.ts";
import {
  maskGuardrailListSecrets,
  openGuardrailListSecrets,
  restoreGuardrailListSecrets,
  sealGuardrailListSecrets,
} from "../guardrails/secrets.ts";
import { hintOf, isSealed, looksMasked, openValue, sealValue } from "../sealed-values.ts";

/**
 * Secrets inside saved configs are stored sealed through the Secrets port (sealed-values.ts), as integrations'
 * are: the provider credentials of every node of the tree (`api_key`, `aws_secret_access_key`,
 * `vertex_service_account_json`...), and the secret check parameters of the guardrails written inline on a
 * node (`input_guardrails`, `before_request_hooks`...: a webhook's headers, a check's `api_key`; the selection
 * of guardrail-secrets.ts). Views (GET, list, versions, audit) show their hints; routing opens them (once per
 * config version, saved-resources.ts). Configs saved before this are read as they are (legacy plaintext):
 * usable, shown masked, sealed at their next update.
 *
 * A save opens the stored config, restores the masked values sent back (`restoreConfigSecrets`), validates the
 * plaintext result and seals it (`sealConfigSecrets`).
 */

type ConfigNode = Record<string, unknown>;

/** The config's own guardrail lists: their check parameters are user data, with secrets of their own. */
const GUARDRAIL_LISTS = new Set(GUARDRAIL_CONFIG_KEYS);

/**
 * Calls `visit` on every config node (the root and its targets, nested) with its path (`config.targets[1]`)
 * and the node at the same place in `previous` when there is one. Params, queries and other user data below a
 * node are not nodes.
 */
async function eachNode(
  node: unknown,
  previous: unknown,
  visit: (node: ConfigNode, previous: ConfigNode | undefined, path: string) => ConfigNode | Promise<ConfigNode>,
  path = "config",
): Promise<unknown> {
  if (typeof node !== "object" || node === null || Array.isArray(node)) return node;
  const before = typeof previous === "object" && previous !== null ? (previous as ConfigNode) : undefined;
  const out = await visit({ ...(node as ConfigNode) }, before, path);
  if (Array.isArray(out.targets)) {
    const previousTargets = Array.isArray(before?.targets) ? before.targets : [];
    out.targets = await Promise.all(
      out.targets.map((target, index) => eachNode(target, previousTargets[index], visit, `${path}.targets[${index}]`)),
    );
  }
  return out;
}

const isSet = (value: unknown) => value !== undefined && value !== null;

/**
 * The config a client sent, with the masked values it sent back restored from `previous` (the stored config,
 * opened: `openConfigSecrets`) at the same place. A masked provider credential that no stored value stands
 * behind is kept as sent; a masked guardrail secret is Invalid (guardrail-secrets.ts).
 */
export async function restoreConfigSecrets(
  config: Record<string, unknown>,
  previous?: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  return (await eachNode(config, previous, (node, before, path) => {
    for (const [key, value] of Object.entries(node)) {
      if (GUARDRAIL_LISTS.has(key)) {
        node[key] = restoreGuardrailListSecrets(value, before?.[key], `${path}.${key}`);
        continue;
      }
      const kept = before?.[key];
      if (isProviderCredentialField(key) && looksMasked(value) && isSet(kept) && hintOf(kept) === value)
        node[key] = kept;
    }
    return node;
  })) as Record<string, unknown>;
}

/** The config as stored: every provider credential and guardrail secret sealed (`config` is plaintext). */
export async function sealConfigSecrets(
  secrets: Secrets,
  config: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  return (await eachNode(config, undefined, async (node) => {
    for (const [key, value] of Object.entries(node)) {
      if (GUARDRAIL_LISTS.has(key)) node[key] = await sealGuardrailListSecrets(secrets, value);
      else if (isProviderCredentialField(key) && isSet(value)) node[key] = await sealValue(secrets, value);
    }
    return node;
  })) as Record<string, unknown>;
}

/** The config routing runs: sealed secrets opened (legacy plaintext ones are already open). */
export async function openConfigSecrets(
  secrets: Secrets,
  config: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  return (await eachNode(config, undefined, async (node) => {
    for (const [key, value] of Object.entries(node)) {
      if (GUARDRAIL_LISTS.has(key)) node[key] = await openGuardrailListSecrets(secrets, value);
      else if (isProviderCredentialField(key) && isSealed(value)) node[key] = await openValue(secrets, value);
    }
    return node;
  })) as Record<string, unknown>;
}

/** The config as views show it: every provider credential and guardrail secret (sealed or legacy) as its hint. */
export function maskConfigSecrets(config: unknown): unknown {
  if (typeof config !== "object" || config === null || Array.isArray(config)) return config;
  const node: ConfigNode = { ...(config as ConfigNode) };
  for (const [key, value] of Object.entries(node)) {
    if (GUARDRAIL_LISTS.has(key)) node[key] = maskGuardrailListSecrets(value);
    else if (isProviderCredentialField(key) && isSet(value)) node[key] = hintOf(value);
  }
  if (Array.isArray(node.targets)) node.targets = node.targets.map(maskConfigSecrets);
  return node;
}
