import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";

/**
 * What a browser does on the gateway's OAuth pages (core/mcp/oauth/pages.ts), played with fetch: form posts
 * without following redirects, and the hidden fields of a page. Also an in-memory OAuth client provider, as an
 * MCP client application keeps one, for the MCP SDK's `auth()` and transports.
 */

export function form(values: Record<string, string>): RequestInit {
  return {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(values).toString(),
    redirect: "manual",
  };
}

/**
 * A form post from one of the gateway's OAuth pages (sign-in, consent) as a browser sends it: with the page's
 * `Origin` (the pages' Referrer-Policy is same-origin, so the browser names the origin rather than `null`).
 */
export function pageForm(
  gatewayUrl: string,
  values: Record<string, string>,
  headers: Record<string, string> = {},
): RequestInit {
  const init = form(values);
  return { ...init, headers: { ...(init.headers as Record<string, string>), origin: gatewayUrl, ...headers } };
}

export const hiddenField = (html: string, name: string) =>
  new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1]?.replace(/&amp;/g, "&");

/** Opens an authorize URL, signs in with an API key and allows: the answer that redirects back to the client. */
export async function signInWithKeyAndAllow(gatewayUrl: string, authorizeUrl: string | URL, apiKey: string) {
  const signIn = await (await fetch(authorizeUrl)).text();
  const consent = await (
    await fetch(
      `${gatewayUrl}/oauth/authorize/sign-in`,
      pageForm(gatewayUrl, {
        request_id: hiddenField(signIn, "request_id")!,
        csrf: hiddenField(signIn, "csrf")!,
        api_key: apiKey,
      }),
    )
  ).text();
  return fetch(
    `${gatewayUrl}/oauth/authorize/consent`,
    pageForm(gatewayUrl, {
      request_id: hiddenField(consent, "request_id")!,
      csrf: hiddenField(consent, "csrf")!,
      decision: "approve",
    }),
  );
}

/** The `code` a decided consent sends back to the client's redirect URI. */
export const codeOf = (decided: Response) => new URL(decided.headers.get("location")!).searchParams.get("code")!;

/** An OAuth client provider that keeps everything in memory; `state` shows what the SDK saved and asked. */
export function memoryOAuthProvider(redirectUrl: string, clientName = "MCP SDK client") {
  const state: {
    client?: OAuthClientInformationMixed;
    tokens?: OAuthTokens;
    verifier: string;
    authorizationUrl?: URL;
  } = { verifier: "" };
  const provider: OAuthClientProvider = {
    redirectUrl,
    clientMetadata: {
      client_name: clientName,
      redirect_uris: [redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    },
    clientInformation: () => state.client,
    saveClientInformation: (information) => {
      state.client = information;
    },
    tokens: () => state.tokens,
    saveTokens: (tokens) => {
      state.tokens = tokens;
    },
    redirectToAuthorization: (url) => {
      state.authorizationUrl = url;
    },
    saveCodeVerifier: (verifier) => {
      state.verifier = verifier;
    },
    codeVerifier: () => state.verifier,
  };
  return { provider, state };
}
