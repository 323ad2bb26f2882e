import type { RecordedRequest } from "../helpers/mock-server.ts";
import { type OpenAIMock, type OpenAIMockOptions, pathOf, queryOf, startOpenAIMock } from "./openai.ts";

/**
 * A mock Azure OpenAI resource: the OpenAI mock in its Azure flavour (content filter annotations, the
 * choice-less first stream chunk) behind Azure's routing rules. Use `x-gateway-custom-host: <mock.url>`: the
 * gateway then calls <mock.url>/openai/deployments/{deployment}/{route}?api-version=…
 *   - a path that is not /openai/deployments/{deployment}/(chat/completions|completions|embeddings),
 *     /openai/responses or /openai/v1/… -> 404 DeploymentNotFound
 *   - deployment routes and /openai/responses without `api-version` -> 400 (the v1 API takes none)
 *   - `apiKey` set: neither `api-key: <apiKey>` nor `Authorization: Bearer <apiKey>` -> 401
 *   - `deployments` set: another deployment name -> 404 DeploymentNotFound
 */
export interface AzureMockOptions extends OpenAIMockOptions {
  apiKey?: string;
  deployments?: string[];
}

const DEPLOYMENT_PATH = /\/openai\/deployments\/([^/]+)\/(chat\/completions|completions|embeddings)$/;
const V1_PATH = /\/openai\/v1\/(chat\/completions|completions|embeddings|models|responses)$/;
/** The Responses API is not under a deployment: it names the deployment in `model` (dated API versions). */
const RESPONSES_PATH = /\/openai\/responses$/;

function azureError(status: number, code: string, message: string) {
  return { status, body: { error: { code, message } } };
}

export function azureGuard(options: AzureMockOptions) {
  return (request: RecordedRequest) => {
    if (options.apiKey) {
      const key = request.headers["api-key"];
      const bearer = request.headers.authorization;
      if (key !== options.apiKey && bearer !== `Bearer ${options.apiKey}`) {
        return azureError(
          401,
          "401",
          "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.",
        );
      }
    }
    const path = pathOf(request.path);
    if (V1_PATH.test(path)) return undefined;
    if (RESPONSES_PATH.test(path)) {
      if (queryOf(request.path).get("api-version")) return undefined;
      return azureError(400, "BadRequest", "Missing required query parameter: api-version");
    }
    const match = DEPLOYMENT_PATH.exec(path);
    const deployment = match ? decodeURIComponent(match[1]) : undefined;
    if (!deployment || (options.deployments && !options.deployments.includes(deployment))) {
      return azureError(
        404,
        "DeploymentNotFound",
        "The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.",
      );
    }
    if (!queryOf(request.path).get("api-version")) {
      return azureError(400, "BadRequest", "Missing required query parameter: api-version");
    }
    return undefined;
  };
}

export function startAzureMock(options: AzureMockOptions = {}): Promise<OpenAIMock> {
  return startOpenAIMock({ azure: true, guard: azureGuard(options), ...options });
}
