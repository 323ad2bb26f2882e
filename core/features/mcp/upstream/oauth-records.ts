import type { OAuthClientInformationMixed } from "@modelcontextprotocol/client";
import type { OAuthDiscoveryState } from "@modelcontextprotocol/client";
import { type SealedValue, openValue, sealValue } from "../../../control/sealed-values.ts";
import { sha256Hex } from "../../../util/ids.ts";
import { ConditionFailedError, type Records, type Secrets } from "../../../store/ports.ts";
import { type McpConnection, connectionKey } from "../records.ts";

/**
 * What the gateway keeps as an OAuth client of upstream MCP servers (`oauth_auto`), all secrets sealed:
 * - its dynamic registration with an integration's authorization server, shared by the integration's users
 *   (pk `MCPUPCLIENT#<integration id>`, sk `<sha256 of the redirect URL>`);
 * - a connect in progress, by its state (pk `MCPUPSTATE#<sha256(state)>`, ten minutes, used once);
 * - the connection itself (core/features/mcp/records.ts `connectionKey(serverId, userId)`), plus what refreshing needs:
 *   the authorization server's URL and metadata and the resource indicator. `expires_at` is in Unix seconds.
 */

export interface UpstreamAuthorization {
  authorization_server: string;
  discovery: OAuthDiscoveryState;
  resource?: string;
}

export type StoredConnection = McpConnection & { upstream?: UpstreamAuthorization };

const clientKey = (integrationId: string, redirectUrl: string) => ({
  pk: `MCPUPCLIENT#${integrationId}`,
  sk: sha256Hex(redirectUrl),
});

export async function readUpstreamClient(
  records: Records,
  secrets: Secrets,
  integrationId: string,
  redirectUrl: string,
): Promise<OAuthClientInformationMixed | undefined> {
  const key = clientKey(integrationId, redirectUrl);
  const item = await records.get(key.pk, key.sk);
  if (!item?.information) return undefined;
  return (await openValue(secrets, item.information as SealedValue)) as OAuthClientInformationMixed;
}

export async function saveUpstreamClient(
  records: Records,
  secrets: Secrets,
  integrationId: string,
  redirectUrl: string,
  information: OAuthClientInformationMixed,
): Promise<void> {
  const key = clientKey(integrationId, redirectUrl);
  await records.put({ ...key, information: await sealValue(secrets, information), updatedAt: Date.now() });
}

export interface PendingConnect {
  organisationId: string;
  workspaceId: string;
  serverId: string;
  userId: string;
  codeVerifier: SealedValue;
  discovery?: OAuthDiscoveryState;
}

const STATE_TTL_SECONDS = 600;
const stateKey = (state: string) => ({ pk: `MCPUPSTATE#${sha256Hex(state)}`, sk: "MCPUPSTATE" });

export async function savePendingConnect(records: Records, state: string, pending: PendingConnect): Promise<void> {
  const ttl = Math.floor(Date.now() / 1000) + STATE_TTL_SECONDS;
  const item = JSON.parse(JSON.stringify(pending)) as Record<string, unknown>;
  await records.put({ ...stateKey(state), ...item, ttl }, { exists: false });
}

/** The connect a callback's state names, taken once (a replayed callback finds nothing). */
export async function takePendingConnect(records: Records, state: string): Promise<PendingConnect | undefined> {
  if (!state || state.length > 200) return undefined;
  const key = stateKey(state);
  const item = await records.get(key.pk, key.sk);
  if (!item) return undefined;
  try {
    await records.delete(key.pk, key.sk, { exists: true });
  } catch (error) {
    if (error instanceof ConditionFailedError) return undefined;
    throw error;
  }
  return item as unknown as PendingConnect;
}

export async function readConnection(
  records: Records,
  serverId: string,
  userId: string | undefined,
): Promise<(StoredConnection & { version?: number }) | undefined> {
  const key = connectionKey(serverId, userId);
  const item = await records.get(key.pk, key.sk);
  return item ? (item as unknown as StoredConnection) : undefined;
}

export async function writeConnection(
  records: Records,
  connection: StoredConnection,
  expectedUpdatedAt?: number,
): Promise<void> {
  const key = connectionKey(connection.serverId, connection.userId);
  const item = JSON.parse(JSON.stringify(connection)) as Record<string, unknown>;
  await records.put(
    { ...item, ...key },
    expectedUpdatedAt === undefined ? undefined : { equals: { updatedAt: expectedUpdatedAt } },
  );
}
