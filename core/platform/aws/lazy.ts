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

/**
 * A store port whose adapter (and its AWS SDK client) is loaded on the first call. With code splitting the
 * client lives in its own chunk, so a function that never uses the port (chat never touches S3 or SQS) does
 * not pay for loading it at cold start. Every port method is async, so forwarding calls is transparent.
 * Optional methods the adapter does not have are named in `absent`: the port must say they are missing without
 * loading the adapter (a forwarding function would make callers believe it has them: GET /_blobs/* on AWS
 * took a Promise for a signed-URL grant and crashed its Lambda environment). The port is not a thenable.
 */
export function lazyPort<T extends object>(
  load: () => Promise<T>,
  absent: readonly (keyof T)[] = [],
): { port: T; loaded(): T | undefined } {
  let instance: T | undefined;
  const get = lazy(async () => {
    instance = await load();
    return instance;
  });
  const missing = new Set<PropertyKey>([...absent, "then"]);
  const port = new Proxy({} as T, {
    get: (_target, name) =>
      missing.has(name)
        ? undefined
        : async (...args: unknown[]) => {
            const target = (await get()) as Record<PropertyKey, (...args: unknown[]) => unknown>;
            return target[name]!.apply(target, args);
          },
  });
  return { port, loaded: () => instance };
}
