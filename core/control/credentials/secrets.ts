/** Secret fields: encrypted together, never shown. */
export interface ProviderSecrets {
  apiKey?: string;
  vertexServiceAccountJson?: string;
  awsAccessKeyId?: string;
  awsSecretAccessKey?: string;
  awsSessionToken?: string;
  /** A provider admin key (OpenAI's admin key, Anthropic's Admin API key): reads the provider's cost report. */
  adminApiKey?: string;
}

/** The public names of the secret fields (as clients send them, and as hints show them). */
export const SECRET_FIELD_NAMES: Record<keyof ProviderSecrets, string> = {
  apiKey: "key",
  vertexServiceAccountJson: "vertex_service_account_json",
  awsAccessKeyId: "aws_access_key_id",
  awsSecretAccessKey: "aws_secret_access_key",
  awsSessionToken: "aws_session_token",
  adminApiKey: "admin_api_key",
};
