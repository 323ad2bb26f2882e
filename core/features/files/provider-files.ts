import { randomBytes } from "node:crypto";
import { upstreamToHttp } from "../../inference/gateway/plan.ts";
import { requestUpstream } from "../../providers/upstream/client.ts";
import { redirectError } from "../../providers/upstream/failures.ts";
import { HttpError } from "../../http/errors.ts";
import { azureAuthHeaders, azureOpenAIOrigin } from "../../providers/azure/endpoints.ts";
import { mapUpstreamError } from "../../providers/errors.ts";
import { loadProvider } from "../../providers/registry.ts";
import { type ProviderTarget, UpstreamError } from "../../providers/types.ts";
import { joinUrl } from "../../providers/url.ts";
import type { Services } from "../../services.ts";
import { fileStoreOf } from "./file-store.ts";
import { providerKeyOf } from "./provider-key.ts";
import type { StoredFile } from "./types.ts";

/**
 * Copies of the gateway's files at providers (the upload that names a provider, native batches, fine-tuning):
 * the file's bytes are streamed from Blobs to the provider's Files API as multipart/form-data (never held whole),
 * and the provider's file id is linked to the gateway's file, per provider account (providerKeyOf), so the copy
 * is made once per account.
 *
 * Providers with a Files API in OpenAI's shape: OpenAI and every OpenAI-compatible provider (`POST
 * <base>/files`), and Azure OpenAI (`POST <resource>/openai/files?api-version=...`, or `/openai/v1/files`).
 */

/** The oldest GA Azure OpenAI data-plane version with files of purpose `batch` (and batches). */
export const AZURE_FILES_API_VERSION = "2024-10-21";

/**
 * The provider's file id for `stored` at `target`'s account: the linked one, else the file is uploaded now (purpose
 * = the file's purpose) and linked. Throws HttpError: the provider's refusal with its status (4xx/5xx) and
 * message, 502 when it cannot be reached or answers no file id, 408 on timeout (REQUEST_TIMEOUT), 400 for a
 * provider without a Files API.
 */
export async function ensureProviderFile(
  services: Services,
  stored: StoredFile,
  target: ProviderTarget,
  signal: AbortSignal,
): Promise<string> {
  const providerKey = providerKeyOf(target);
  const linked = stored.providerFiles[providerKey];
  if (linked) return linked;
  const providerFileId = await uploadToProvider(services, stored, target, signal);
  await fileStoreOf(services).linkProviderFile(stored.owner, stored.file.id, providerKey, providerFileId);
  stored.providerFiles[providerKey] = providerFileId;
  return providerFileId;
}

/**
 * Providers whose Files API the gateway uses (their native batches and fine-tuning read files from it). An upload
 * naming another provider is kept in the gateway only: most OpenAI-compatible providers have no Files API, and a
 * gateway-run batch needs none.
 */
const PROVIDERS_WITH_FILES = new Set(["openai", "azure-openai", "groq"]);

export const hasFilesApi = (provider: string) => PROVIDERS_WITH_FILES.has(provider);

/** Where a provider's Files API takes uploads, with its auth headers. */
export async function filesEndpointOf(
  target: ProviderTarget,
): Promise<{ url: string; headers: Record<string, string> }> {
  if (target.provider === "azure-openai") {
    const origin = azureOpenAIOrigin(target);
    const version = target.azure?.apiVersion;
    const headers = { ...azureAuthHeaders(target.apiKey), ...target.forwardHeaders };
    if (version === "v1") return { url: joinUrl(origin, "/openai/v1/files"), headers };
    // Older versions (and previews before it) have no batch files: the upload uses the first that has.
    const apiVersion = version && version >= AZURE_FILES_API_VERSION ? version : AZURE_FILES_API_VERSION;
    return { url: `${joinUrl(origin, "/openai/files")}?api-version=${encodeURIComponent(apiVersion)}`, headers };
  }
  const adapter = await loadProvider(target.provider);
  // Every provider has a pass-through endpoint now; only those with OpenAI's Files API take uploads there.
  if (!adapter?.passthrough || !hasFilesApi(target.provider)) {
    throw new UpstreamError(400, `Provider '${target.provider}' has no Files API the gateway can upload to.`, {
      code: "unsupported_provider",
      param: "x-gateway-provider",
    });
  }
  const endpoint = await adapter.passthrough(target, {});
  return { url: joinUrl(endpoint.baseUrl, "/files"), headers: endpoint.headers };
}

async function uploadToProvider(
  services: Services,
  stored: StoredFile,
  target: ProviderTarget,
  signal: AbortSignal,
): Promise<string> {
  try {
    const endpoint = await filesEndpointOf(target);
    const blob = await services.stores.blobs.get(stored.blobKey);
    if (!blob) throw new HttpError(404, `The bytes of file ${stored.file.id} are gone.`, { code: "file_not_found" });
    const form = multipartUpload(stored, blob.body, blob.size);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(endpoint.headers)) headers[name.toLowerCase()] = value;
    headers["content-type"] = form.contentType;
    headers["content-length"] = String(form.length);
    const timeoutMs = services.settings.REQUEST_TIMEOUT;
    const reply = await requestUpstream(
      { url: endpoint.url, method: "POST", headers, body: form.body },
      { timeoutMs, signal, trusted: services.trustedHosts },
    );
    if (reply.status >= 300 && reply.status < 400) {
      await reply.discard();
      throw redirectError(reply);
    }
    const text = await reply.text();
    if (reply.status >= 400) throw mapUpstreamError(reply.status, text);
    const id = parseFileId(text);
    if (!id) {
      throw new UpstreamError(502, "The provider accepted the file but answered no file id.", {
        code: "upstream_invalid_response",
      });
    }
    return id;
  } catch (error) {
    if (error instanceof UpstreamError) throw upstreamToHttp(error, {});
    throw error;
  }
}

function parseFileId(text: string): string | undefined {
  try {
    const id = (JSON.parse(text) as { id?: unknown } | null)?.id;
    return typeof id === "string" && id !== "" ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A multipart/form-data body of OpenAI's upload (`purpose`, then `file`) around the file's byte stream, with its
 * exact length (providers may refuse chunked uploads).
 */
export function multipartUpload(
  stored: Pick<StoredFile, "file" | "contentType">,
  content: ReadableStream<Uint8Array>,
  size: number,
): { contentType: string; length: number; body: ReadableStream<Uint8Array> } {
  const boundary = `----gateway-${randomBytes(12).toString("hex")}`;
  const head = Buffer.from(
    `--${boundary}\r\ncontent-disposition: form-data; name="purpose"\r\n\r\n${stored.file.purpose}\r\n` +
      `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="${quotedName(stored.file.filename)}"\r\n` +
      `content-type: ${stored.contentType.replace(/[\r\n]/g, "")}\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const reader = content.getReader();
  let started = false;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue(head);
        return;
      }
      const next = await reader.read();
      if (next.done) {
        controller.enqueue(tail);
        controller.close();
      } else controller.enqueue(next.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  return { contentType: `multipart/form-data; boundary=${boundary}`, length: head.length + size + tail.length, body };
}

/** A filename inside a quoted header parameter: quotes and line breaks percent-encoded, as browsers send them. */
function quotedName(filename: string): string {
  return filename.replace(/"/g, "%22").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}
