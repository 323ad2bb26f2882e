/**
 * The console's only way to the gateway: the public control-plane API (`/v1/...`), called with the signed-in
 * principal's own credentials, so its scopes and workspace isolation hold exactly as for any other client.
 *
 * - API key: sent in `x-gateway-api-key`, kept in sessionStorage for this tab only (never localStorage or the URL).
 * - SSO session: the HttpOnly session cookie goes along by itself; state-changing calls echo the readable
 *   `gateway_csrf` cookie (or the `csrf_token` of `GET /v1/auth/self`) in `x-gateway-csrf`.
 */

/** OpenAI's error object, as every gateway error carries it. */
export interface OpenAiError {
  message: string;
  type: string | null;
  param: string | null;
  code: string | null;
}

export class ApiError extends Error {
  readonly status: number;
  readonly error: OpenAiError;
  constructor(status: number, error: OpenAiError) {
    super(error.message);
    this.name = "ApiError";
    this.status = status;
    this.error = error;
  }
}

export type Credentials = { kind: "api_key"; key: string } | { kind: "session"; csrfToken?: string };

const KEY_STORAGE = "gateway.console.apiKey";
const SESSION_STORAGE = "gateway.console.session";

let credentials: Credentials | null = restore();
const signedOutListeners = new Set<() => void>();

function restore(): Credentials | null {
  try {
    const key = sessionStorage.getItem(KEY_STORAGE);
    if (key) return { kind: "api_key", key };
    if (sessionStorage.getItem(SESSION_STORAGE)) return { kind: "session" };
  } catch {
    // Storage can be disabled: the user signs in again.
  }
  return null;
}

export function currentCredentials(): Credentials | null {
  return credentials;
}

export function saveCredentials(next: Credentials | null): void {
  credentials = next;
  try {
    sessionStorage.removeItem(KEY_STORAGE);
    sessionStorage.removeItem(SESSION_STORAGE);
    if (next?.kind === "api_key") sessionStorage.setItem(KEY_STORAGE, next.key);
    if (next?.kind === "session") sessionStorage.setItem(SESSION_STORAGE, "1");
  } catch {
    // Without storage the credentials live as long as the page.
  }
}

/** Called when the gateway answers 401 (expired session, revoked key): the layout shows the sign-in page. */
export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

export function readCookie(name: string): string | undefined {
  for (const part of document.cookie.split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === name) return decodeURIComponent(value.join("="));
  }
  return undefined;
}

/** The metadata every console call carries (`x-gateway-metadata`). */
export const CONSOLE_METADATA = { key: "_source", value: "console" } as const;
const CONSOLE_METADATA_HEADER = JSON.stringify({ [CONSOLE_METADATA.key]: CONSOLE_METADATA.value });

export type Query = Record<string, string | number | boolean | null | undefined>;

export interface ApiInit extends Omit<RequestInit, "body"> {
  /** A plain object or array is sent as JSON; strings, FormData and Blobs as they are. */
  body?: BodyInit | object | null;
  /** Query parameters; empty, null and undefined values are left out. */
  query?: Query;
}

/** Joins `path` (starting with `/v1/`) and its query into a same-origin URL. */
export function apiUrl(path: string, query?: Query): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== "") params.set(name, String(value));
  }
  const search = params.toString();
  return `${gatewayBase()}${path}${search ? `?${search}` : ""}`;
}

/** The gateway's origin: the page's own (the gateway or the Router serves both the console and the API). */
function gatewayBase(): string {
  return "";
}

const isJsonBody = (body: unknown): body is object =>
  body !== null &&
  typeof body === "object" &&
  !(body instanceof FormData) &&
  !(body instanceof Blob) &&
  !(body instanceof URLSearchParams) &&
  !(body instanceof ArrayBuffer) &&
  !ArrayBuffer.isView(body) &&
  !(body instanceof ReadableStream);

/**
 * Calls the gateway and returns the parsed JSON answer (undefined for an empty one). Any non-2xx answer
 * throws an ApiError with the gateway's error object; a 401 also signs the console out.
 */
export async function api<T>(path: string, init: ApiInit = {}): Promise<T> {
  const { query, body, headers: extraHeaders, ...rest } = init;
  const headers = new Headers(extraHeaders);
  headers.set("accept", "application/json");
  let sent: BodyInit | null | undefined;
  if (isJsonBody(body)) {
    headers.set("content-type", "application/json");
    sent = JSON.stringify(body);
  } else {
    sent = body as BodyInit | null | undefined;
  }
  // Tags the console's own calls in their request logs, so the Logs page can leave them out (live tail would
  // otherwise list its own polls).
  if (!headers.has("x-gateway-metadata")) headers.set("x-gateway-metadata", CONSOLE_METADATA_HEADER);
  const method = (rest.method ?? "GET").toUpperCase();
  if (credentials?.kind === "api_key") headers.set("x-gateway-api-key", credentials.key);
  if (credentials?.kind === "session" && method !== "GET" && method !== "HEAD") {
    const csrf = readCookie("gateway_csrf") ?? credentials.csrfToken;
    if (csrf) headers.set("x-gateway-csrf", csrf);
  }
  const response = await fetch(apiUrl(path, query), {
    ...rest,
    method,
    headers,
    body: sent,
    credentials: "same-origin",
  });
  const text = await response.text();
  if (!response.ok) {
    const error = parseError(text, response.status);
    if (response.status === 401 && credentials) {
      saveCredentials(null);
      for (const listener of signedOutListeners) listener();
    }
    throw new ApiError(response.status, error);
  }
  if (text === "") return undefined as T;
  return JSON.parse(text) as T;
}

function parseError(text: string, status: number): OpenAiError {
  try {
    const parsed = JSON.parse(text) as { error?: Partial<OpenAiError> };
    if (parsed?.error && typeof parsed.error.message === "string") {
      return {
        message: parsed.error.message,
        type: parsed.error.type ?? null,
        param: parsed.error.param ?? null,
        code: parsed.error.code ?? null,
      };
    }
  } catch {
    // Not JSON (a proxy's page): fall through.
  }
  return { message: `The gateway answered ${status}.`, type: null, param: null, code: null };
}

/** A list page as the control-plane lists answer (core/http/lists.ts). */
export interface ListPage<T> {
  object: "list";
  data: T[];
  has_more?: boolean;
  next_cursor?: string | null;
  total?: number;
}
