import { UploadedFile } from "./uploaded-file.ts";

/**
 * A multipart/form-data upstream body built from a validated form object (core/inference/gateway/multipart-body.ts):
 * strings, numbers and booleans as fields, UploadedFile values as file parts, arrays as repeated `name[]` parts
 * (OpenAI's convention for `image[]` and `timestamp_granularities[]`). Encoded once to bytes, so a retry sends
 * the same body and undici gets a content-length.
 */
export async function encodeForm(
  form: Record<string, unknown>,
  options: { arraySuffix?: string } = {},
): Promise<{ body: Uint8Array; contentType: string }> {
  const data = new FormData();
  const suffix = options.arraySuffix ?? "[]";
  const append = (name: string, value: unknown) => {
    if (value === undefined || value === null) return;
    if (value instanceof UploadedFile) data.append(name, value.blob(), value.filename);
    else if (typeof value === "object") data.append(name, JSON.stringify(value));
    else data.append(name, String(value));
  };
  for (const [name, value] of Object.entries(form)) {
    if (Array.isArray(value)) for (const item of value) append(`${name}${suffix}`, item);
    else append(name, value);
  }
  const encoded = new Response(data);
  return {
    body: new Uint8Array(await encoded.arrayBuffer()),
    contentType: encoded.headers.get("content-type")!,
  };
}
