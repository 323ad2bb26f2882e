/** What A2A tests send through the gateway: the caller's key on every request, and a user message. */

/** A fetch that adds the caller's gateway key (how an A2A client authenticates to the gateway). */
export const withKey =
  (key: string): typeof fetch =>
  (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set("x-gateway-api-key", key);
    return fetch(input, { ...init, headers });
  };

/** The text parts of an SDK message, joined. */
export const textOf = (parts: Array<{ content?: { $case: string; value: unknown } }> | undefined) =>
  (parts ?? []).map((part) => (part.content?.$case === "text" ? part.content.value : "")).join("");

/** A SendMessage request of the user, in the SDK's 1.0 types. */
export const userMessage = (text: string) => ({
  tenant: "",
  message: {
    messageId: crypto.randomUUID(),
    contextId: "",
    taskId: "",
    role: 1,
    parts: [{ content: { $case: "text" as const, value: text }, metadata: undefined, filename: "", mediaType: "" }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  },
  configuration: undefined,
  metadata: undefined,
});
