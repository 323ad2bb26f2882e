/**
 * Builds a value on first use and keeps it for the life of the Lambda container. A failed build is forgotten,
 * so a transient failure (a throttled DynamoDB read during bootstrap) is retried by the next invocation
 * instead of poisoning the container until it is recycled.
 */
export function lazy<T>(build: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= build().catch((error: unknown) => {
      value = undefined;
      throw error;
    });
    return value;
  };
}
