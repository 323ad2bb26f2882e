import { providerKeyOf } from "../../providers/account-key.ts";
import type { ProviderTarget } from "../../providers/types.ts";

/**
 * A short key naming where a target's calls land: its saved integration, or else its provider account (a hash of
 * its credentials, host and region: providerKeyOf). What a stored response records of the target that answered
 * it, so a chain continues there while it can (response ids and encrypted reasoning are an account's).
 */
export function targetKeyOf(target: ProviderTarget): string {
  return target.integrationId ? `integration:${target.integrationId}` : `account:${providerKeyOf(target)}`;
}
