import * as z from "zod";
import { EXPORT_FIELDS } from "./log-exports.ts";

/**
 * A list of log export field names (the organisation's and a workspace's `log_export_denied_fields`), checked
 * against the fields an export can carry; `null` clears the setting (a workspace then follows its organisation).
 */
export const exportFieldListSchema = z
  .array(
    z.string().refine((field) => Object.hasOwn(EXPORT_FIELDS, field), {
      message: `expected one of the export fields: ${Object.keys(EXPORT_FIELDS).join(", ")}`,
    }),
  )
  .max(Object.keys(EXPORT_FIELDS).length)
  .transform((fields) => [...new Set(fields)])
  .nullable();
