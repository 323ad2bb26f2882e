import type { PageProps } from "../../pages.ts";
import { SavedProviders, type SavedProviderKind } from "./saved-providers.tsx";

/** An integration as `/v1/integrations` answers it (core/control/integrations/store.ts presentIntegration). */
interface Integration {
  id: string;
  slug: string;
  name: string;
  ai_provider_id: string;
  description: string | null;
  workspace_id: string | null;
  masked_api_key: string | null;
  configurations: Record<string, unknown>;
  last_updated_at: string | null;
}

const INTEGRATIONS: SavedProviderKind<Integration> = {
  title: "Integrations",
  noun: "integration",
  collection: "/v1/integrations",
  providerField: "ai_provider_id",
  noteField: "description",
  slugRequired: true,
  view: (item) => ({
    id: item.id,
    slug: item.slug,
    name: item.name,
    provider: item.ai_provider_id,
    workspace_id: item.workspace_id,
    note: item.description,
    masked_api_key: item.masked_api_key,
    settings: item.configurations ?? {},
    updated: item.last_updated_at,
  }),
};

/** `#/integrations`: saved providers with their credentials (write-only). */
export default function IntegrationsPage(_props: PageProps) {
  return <SavedProviders kind={INTEGRATIONS} />;
}
