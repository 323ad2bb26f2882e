import { randomBytes } from "node:crypto";
import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/client";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/client";
import { openValue } from "../../../control/sealed-values.ts";
import type { Records, Secrets } from "../../../store/ports.ts";
import type { McpIntegration } from "../records.ts";
import { readUpstreamClient, saveUpstreamClient } from "./oauth-records.ts";

/**
 * The gateway's OAuthClientProvider (MCP SDK, client/auth.js) for one connect of one user to one upstream MCP
 * server. It lives for one request: what the SDK hands it (state, PKCE verifier, discovery, tokens) is collected
 * here and stored by the caller (core/features/mcp/upstream/oauth-connect.ts), sealed. The client registration is read from
 * the integration's pre-registered `client_id` / sealed `client_secret`, else from the gateway's own dynamic
 * registration with that authorization server.
 */
export class UpstreamOAuthProvider implements OAuthClientProvider {
  readonly redirectUrl: string;
  private readonly records: Records;
  private readonly secrets: Secrets;
  private readonly integration: McpIntegration;
  private verifier?: string;
  private discovery?: OAuthDiscoveryState;
  private stateValue?: string;
  authorizationUrl?: URL;
  savedTokens?: OAuthTokens;
  savedClient?: OAuthClientInformationMixed;

  constructor(
    stores: { records: Records; secrets: Secrets },
    integration: McpIntegration,
    redirectUrl: string,
    restore: { codeVerifier?: string; discovery?: OAuthDiscoveryState } = {},
  ) {
    this.records = stores.records;
    this.secrets = stores.secrets;
    this.integration = integration;
    this.redirectUrl = redirectUrl;
    this.verifier = restore.codeVerifier;
    this.discovery = restore.discovery;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "AI gateway",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic",
      ...(this.integration.configurations.scope ? { scope: this.integration.configurations.scope } : {}),
    };
  }

  state(): string {
    this.stateValue ??= randomBytes(32).toString("base64url");
    return this.stateValue;
  }

  get stateParameter(): string | undefined {
    return this.stateValue;
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const configured = this.integration.configurations;
    if (configured.client_id) {
      const secret = configured.client_secret ? await openValue(this.secrets, configured.client_secret) : undefined;
      return { client_id: configured.client_id, ...(typeof secret === "string" ? { client_secret: secret } : {}) };
    }
    return this.savedClient ?? readUpstreamClient(this.records, this.secrets, this.integration.id, this.redirectUrl);
  }

  async saveClientInformation(information: OAuthClientInformationMixed): Promise<void> {
    this.savedClient = information;
    if (this.integration.configurations.client_id) return;
    await saveUpstreamClient(this.records, this.secrets, this.integration.id, this.redirectUrl, information);
  }

  /** A connect always starts a new authorization: the tokens of an earlier one are not presented. */
  tokens(): OAuthTokens | undefined {
    return this.savedTokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.savedTokens = tokens;
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    this.authorizationUrl = authorizationUrl;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (!this.verifier) throw new Error("no PKCE code verifier for this connect");
    return this.verifier;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }

  get pkceVerifier(): string | undefined {
    return this.verifier;
  }
}
