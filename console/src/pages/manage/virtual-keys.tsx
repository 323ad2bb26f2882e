import type { PageProps } from "../../pages.ts";
import { SavedProviders, type SavedProviderKind } from "./saved-providers.tsx";

/** A virtual key as `/v1/virtual-keys` answers it (core/control/virtual-keys/service.ts presentVirtualKey). */
interface VirtualKey {
  id: string;
  slug: string;
  name: string;
  provider: string;
  note: string | null;
  workspace_id: string | null;
  masked_api_key: string | null;
  model_config: Record<string, unknown>;
  last_updated_at: string | null;
}

const VIRTUAL_KEYS: SavedProviderKind<VirtualKey> = {
  title: "Virtual keys",
  noun: "virtual key",
  collection: "/v1/virtual-keys",
  providerField: "provider",
  noteField: "note",
  slugRequired: false,
  view: (item) => ({
    id: item.id,
    slug: item.slug,
    name: item.name,
    provider: item.provider,
    workspace_id: item.workspace_id,
    note: item.note,
    masked_api_key: item.masked_api_key,
    settings: item.model_config ?? {},
    updated: item.last_updated_at,
  }),
};

/** `#/virtual-keys`: the legacy face of saved providers (also listed under integrations). */
export default function VirtualKeysPage(_props: PageProps) {
  return <SavedProviders kind={VIRTUAL_KEYS} />;
}
