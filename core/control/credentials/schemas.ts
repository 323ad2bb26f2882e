import * as z from "zod";

/**
 * Request-body pieces shared by the saved-resource routes (integrations, virtual keys, configs). Kept apart
 * from credentials.ts, which the data plane imports: zod schemas are built at import.
 */

const text = z.string().trim().min(1);

/** Provider-specific settings. Portkey's names and our config's names are both accepted. */
export const configurationsSchema = z
  .looseObject({
    custom_host: text.max(2048).optional(),
    resource_name: text.optional(),
    azure_resource_name: text.optional(),
    deployment_id: text.optional(),
    deployment_name: text.optional(),
    azure_deployment_id: text.optional(),
    azure_deployment_name: text.optional(),
    api_version: text.optional(),
    azure_api_version: text.optional(),
    azure_model_name: text.optional(),
    vertex_project_id: text.optional(),
    vertex_region: text.optional(),
    vertex_service_account_json: z.union([text, z.record(z.string(), z.unknown())]).optional(),
    aws_access_key_id: text.optional(),
    aws_secret_access_key: text.optional(),
    aws_session_token: text.optional(),
    aws_region: text.optional(),
  })
  .refine((value) => value !== null, "configurations must be an object");

export type ConfigurationsInput = z.infer<typeof configurationsSchema>;

/** Slugs: letters, digits, `-` and `.` (never `_`, so a slug can never look like a prefixed id). */
export const slugSchema = z
  .string()
  .trim()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9.-]{0,63}$/,
    "a slug is 1 to 64 letters, digits, '-' or '.', starting with a letter or digit",
  );

/** Headers the transport owns: never set from a stored value. */
export const TRANSPORT_HEADERS = [
  "host",
  "content-length",
  "connection",
  "transfer-encoding",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
];

/** A stored header's name: an HTTP token (RFC 9110), and none of `forbidden` (lower case). */
export const headerNameSchema = (forbidden: ReadonlySet<string>) =>
  z
    .string()
    .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, "not a valid header name")
    .refine((name) => !forbidden.has(name.toLowerCase()), "this header cannot be set");
