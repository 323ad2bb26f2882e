/**
 * Deployment secrets, set once per stage before the first deploy:
 *   npx sst@4 secret set MasterKey "$(openssl rand -base64 32)" --stage prod
 *   npx sst@4 secret set BootstrapAdminKey "<the organisation admin API key you choose>" --stage prod
 */

/** 32 bytes of base64: the AES-GCM key that seals provider credentials stored in the table. */
export const masterKey = new sst.Secret("MasterKey");

/** The first organisation admin API key; only its hash is stored (core/control/organisation/bootstrap.ts). */
export const bootstrapAdminKey = new sst.Secret("BootstrapAdminKey");
