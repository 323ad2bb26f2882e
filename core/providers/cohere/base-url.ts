/** Cohere's API origin; a custom host replaces it (the `/v2/...` paths are kept). */
export const COHERE_BASE_URL = "https://api.cohere.com";
