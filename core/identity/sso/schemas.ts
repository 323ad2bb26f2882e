import * as z from "zod";
import { AUTH_METHODS } from "./settings.ts";

/**
 * The body of `PUT /v1/admin/organisation/sso`. `client_secret` and `jwks` may be left out (or sent back as
 * the mask a view showed) to keep the stored ones. Domains are lower-cased host names.
 */

const privateJwkSchema = z.looseObject({
  kty: z.enum(["RSA", "EC", "OKP"]),
  d: z.string().min(1),
  kid: z.string().max(200).optional(),
  alg: z.string().max(20).optional(),
});

/** A private key set for `private_key_jwt`: asymmetric keys with their private part. */
export const privateJwksSchema = z.strictObject({ keys: z.array(privateJwkSchema).min(1).max(5) });

const domainSchema = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, "expected a domain name");

const clientFields = {
  client_id: z.string().trim().min(1).max(500),
  client_secret: z.string().min(1).max(2000).optional(),
  token_endpoint_auth_method: z.enum(AUTH_METHODS).default("client_secret_basic"),
  jwks: privateJwksSchema.optional(),
  scopes: z
    .array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, "expected an OAuth scope token"))
    .max(30)
    .default(["openid", "email", "profile"]),
};

export const ssoSettingsUpdateSchema = z.strictObject({
  enabled: z.boolean().default(true),
  issuer: z.url().max(2000),
  ...clientFields,
  disable_auto_provision_user: z.boolean().default(false),
  allowed_domains: z.array(domainSchema).max(100).default([]),
  additional_clients: z
    .array(
      z.strictObject({
        sso_client_id: z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, "expected letters, digits, '_', '.' or '-'"),
        ...clientFields,
      }),
    )
    .max(20)
    .default([]),
});

export type SsoSettingsUpdateInput = z.infer<typeof ssoSettingsUpdateSchema>;
export type SsoClientInput = Omit<SsoSettingsUpdateInput["additional_clients"][number], "sso_client_id">;
