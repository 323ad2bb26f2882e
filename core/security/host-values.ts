/**
 * Values that become part of an upstream host name (or of the path next to it): AWS regions
 * (`bedrock-runtime.{region}.amazonaws.com`), Azure resource names (`{resource}.openai.azure.com`), Vertex
 * regions (`{region}-aiplatform.googleapis.com`) and projects. Anything else in them (`@`, `:`, `/`, `.`)
 * could move the request to another host: `x@127.0.0.1:19113/` as a region makes the URL's host 127.0.0.1.
 * Checked with strict patterns at every entry (headers, inline and saved configs, saved integrations) and
 * again by the provider adapters; the guarded dispatcher is the last line behind them.
 */

export type HostValueField = "aws_region" | "vertex_region" | "vertex_project_id" | "resource_name";

const PATTERNS: Record<HostValueField, { pattern: RegExp; shape: string }> = {
  // us-east-1, eu-central-2, us-gov-west-1, us-isob-east-1, ap-southeast-5, cn-northwest-1...
  aws_region: { pattern: /^[a-z]{2}(-[a-z]{1,12}){1,3}-\d{1,2}$/, shape: "an AWS region such as us-east-1" },
  // us-central1, europe-west4, northamerica-northeast1, global, us, eu...
  vertex_region: {
    pattern: /^(?=.{1,40}$)[a-z][a-z0-9]*(-[a-z0-9]+)*$/,
    shape: "a Google Cloud region such as us-central1 (or global)",
  },
  // my-project-123, and legacy domain-scoped ids (example.com:my-project).
  vertex_project_id: {
    pattern: /^(?=.{1,128}$)[a-z0-9]([a-z0-9.:-]*[a-z0-9])?$/i,
    shape: "a Google Cloud project id such as my-project-123",
  },
  // One DNS label: Azure resource names are letters, digits and hyphens.
  resource_name: {
    pattern: /^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$/,
    shape: "an Azure resource name (letters, digits and '-', at most 63)",
  },
};

/** Why `value` cannot be used as `field` (a sentence for a 400), or undefined when it is well-formed. */
export function hostValueProblem(field: HostValueField, value: string): string | undefined {
  const { pattern, shape } = PATTERNS[field];
  if (pattern.test(value)) return undefined;
  return `${JSON.stringify(value.slice(0, 100))} is not ${shape}.`;
}
