import { addMembership } from "../../core/control/workspaces/members.ts";
import type { WorkspaceRole } from "../../core/auth/principal.ts";
import { userStore } from "../../core/control/users/store.ts";
import { workspaceStore } from "../../core/control/workspaces/store.ts";
import type { TestGateway } from "./gateway.ts";

/**
 * Control-plane fixtures seeded straight into the test gateway's store through the owning modules (workspaces,
 * users, memberships), for tests of other features; the workspace and user routes have their own tests.
 */
export async function seedWorkspace(gateway: TestGateway, name: string) {
  const { records } = gateway.gateway.services.stores;
  const slug = `${name.toLowerCase().replace(/[^a-z0-9]+/g, "-")}-${Math.random().toString(36).slice(2, 8)}`;
  return workspaceStore(records).create(gateway.gateway.bootstrap.organisationId, {
    slug,
    name,
    description: null,
    defaults: {},
  });
}

export async function seedUser(gateway: TestGateway, email: string, role: "owner" | "admin" | "member" = "member") {
  const { records } = gateway.gateway.services.stores;
  const normalised = email.toLowerCase();
  return userStore(records).create(gateway.gateway.bootstrap.organisationId, {
    slug: normalised,
    email: normalised,
    role,
  });
}

export async function seedMember(gateway: TestGateway, workspaceId: string, userId: string, role: WorkspaceRole) {
  const { records } = gateway.gateway.services.stores;
  return addMembership(records, {
    organisationId: gateway.gateway.bootstrap.organisationId,
    workspaceId,
    userId,
    role,
  });
}

/** A JSON call with a gateway key; returns status and parsed body. */
export async function call(
  gateway: TestGateway,
  key: string | undefined,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: {
      ...(key ? { "x-gateway-api-key": key } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = text;
  }
  return { status: response.status, body: json, text };
}

/** Creates a key through the API and returns its id and secret. */
export async function createKey(
  gateway: TestGateway,
  creatorKey: string,
  type: string,
  subType: string,
  body: Record<string, unknown>,
) {
  const answer = await call(gateway, creatorKey, "POST", `/v1/api-keys/${type}/${subType}`, body);
  if (answer.status !== 201) throw new Error(`create key failed: ${answer.status} ${answer.text}`);
  return { id: answer.body.id as string, key: answer.body.key as string, body: answer.body };
}
