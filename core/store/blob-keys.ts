/**
 * Blob keys both platforms accept: 1..1024 bytes of `/`-separated segments, none of them empty, `.` or `..`,
 * and no leading `/` or NUL. S3 would take more, but a key that works on AWS and fails locally (where keys
 * become paths) is a trap, so both adapters check the same rule.
 */
export const MAX_BLOB_KEY_BYTES = 1024;

export function checkBlobKey(key: string): void {
  const valid =
    key !== "" &&
    Buffer.byteLength(key) <= MAX_BLOB_KEY_BYTES &&
    !key.includes("\0") &&
    key.split("/").every((segment) => segment !== "" && segment !== "." && segment !== "..");
  if (!valid) throw new RangeError(`invalid blob key: ${JSON.stringify(key)}`);
}
