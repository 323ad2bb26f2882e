import type { Records } from "../../store/ports.ts";
import { type Resource, ResourceStore } from "../resource-store.ts";

/**
 * A workspace's provider (the `portkey-ai` SDK's `providers.*`): a named, slugged handle on an integration the
 * workspace may use, optionally expiring. Requests name it as `@slug` like an integration
 * (core/control/saved-resources.ts resolves both); it holds no credentials of its own.
 */
export interface ProviderResource extends Resource {
  workspaceId: string;
  slug: string;
  name: string;
  note?: string;
  integrationId: string;
  /** Unix seconds after which `@slug` stops resolving. */
  expiresAt?: number;
}

export const providerStore = (records: Records) => new ResourceStore<ProviderResource>(records, "PROVIDER", "prv");

export function presentProvider(provider: ProviderResource) {
  return {
    id: provider.id,
    object: "provider",
    slug: provider.slug,
    name: provider.name,
    note: provider.note ?? null,
    integration_id: provider.integrationId,
    workspace_id: provider.workspaceId,
    expires_at: provider.expiresAt ? new Date(provider.expiresAt * 1000).toISOString() : null,
    created_at: new Date(provider.createdAt * 1000).toISOString(),
    last_updated_at: new Date(provider.updatedAt * 1000).toISOString(),
  };
}

export function providerExpired(provider: ProviderResource, now = Date.now()): boolean {
  return provider.expiresAt !== undefined && provider.expiresAt * 1000 <= now;
}
