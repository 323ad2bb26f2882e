import type { OAuthClientInformationMixed } from "@modelcontextprotocol/client";
import { openValue, sealValue } from "../../../control/sealed-values.ts";
import { guardedFetch } from "../../../security/guarded-dispatcher.ts";
import type { Services } from "../../../services.ts";
import { ConditionFailedError } from "../../../store/ports.ts";
import type { McpServer } from "../records.ts";
import { type StoredConnection, readConnection, writeConnection } from "./oauth-records.ts";

/** Refresh this long before the upstream's expiry, so a token does not lapse on its way there. */
const EXPIRY_MARGIN_SECONDS = 30;

/**
 * A fresh upstream access token for `server` as `userId` (their own connection), or the workspace-wide one when
 * no user is given; undefined when there is no connection or it cannot be refreshed (the user must connect again).
 * An expired token is refreshed through the MCP SDK and the rotated tokens saved; of two concurrent refreshes
 * one saves, and the other reads what it saved.
 */
export async function upstreamAccessToken(
  services: Services,
  server: McpServer,
  userId: string | undefined,
): Promise<string | undefined> {
  const records = services.stores.records;
  const secrets = services.stores.secrets;
  const connection = await readConnection(records, server.id, userId);
  if (!connection || connection.organisationId !== server.organisationId) return undefined;
  const now = Math.floor(Date.now() / 1000);
  if (connection.expires_at === undefined || connection.expires_at > now + EXPIRY_MARGIN_SECONDS) {
    return (await openValue(secrets, connection.access_token)) as string;
  }
  if (!connection.refresh_token || !connection.client || !connection.upstream) return undefined;
  const refreshed = await refresh(services, connection);
  if (!refreshed) return undefined;
  try {
    await writeConnection(records, refreshed.connection, connection.updatedAt);
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
    // Another request refreshed first (and the upstream rotated the refresh token): use what it saved.
    const latest = await readConnection(records, server.id, userId);
    return latest ? ((await openValue(secrets, latest.access_token)) as string) : undefined;
  }
  return refreshed.accessToken;
}

async function refresh(
  services: Services,
  connection: StoredConnection,
): Promise<{ connection: StoredConnection; accessToken: string } | undefined> {
  const secrets = services.stores.secrets;
  const client = connection.client!;
  const upstream = connection.upstream!;
  const clientSecret = client.client_secret ? await openValue(secrets, client.client_secret) : undefined;
  const clientInformation: OAuthClientInformationMixed = {
    client_id: client.client_id,
    ...(typeof clientSecret === "string" ? { client_secret: clientSecret } : {}),
  };
  const { refreshAuthorization } = await import("@modelcontextprotocol/client");
  let tokens: Awaited<ReturnType<typeof refreshAuthorization>>;
  try {
    tokens = await refreshAuthorization(upstream.authorization_server, {
      metadata: upstream.discovery.authorizationServerMetadata,
      clientInformation,
      refreshToken: (await openValue(secrets, connection.refresh_token!)) as string,
      resource: upstream.resource,
      fetchFn: guardedFetch(services.trustedHosts),
    });
  } catch (error) {
    console.error(`MCP upstream token refresh failed for server ${connection.serverId}: ${(error as Error)?.message}`);
    return undefined;
  }
  const now = Math.floor(Date.now() / 1000);
  const next: StoredConnection = {
    ...connection,
    access_token: await sealValue(secrets, tokens.access_token),
    // An upstream that does not rotate keeps the refresh token it had.
    refresh_token: tokens.refresh_token ? await sealValue(secrets, tokens.refresh_token) : connection.refresh_token,
    expires_at: tokens.expires_in ? now + tokens.expires_in : undefined,
    scope: tokens.scope ?? connection.scope,
    updatedAt: now,
  };
  return { connection: next, accessToken: tokens.access_token };
}
