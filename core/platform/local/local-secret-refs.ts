import { readFile, realpath } from "node:fs/promises";
import { isAbsolute, resolve, sep } from "node:path";
import { SETTING_NAMES } from "../../config/settings.ts";
import { type SecretRef, SecretRefError, type SecretResolver } from "../../store/secret-refs.ts";

/** The largest secret file read (service account JSON files are a few KiB). */
const MAX_FILE_BYTES = 64 * 1024;

/**
 * Variables an `env:` reference may not read: the gateway's own settings (master key, bootstrap admin key...)
 * and the process's AWS credentials. Otherwise whoever may save a provider could send them to a custom host.
 */
const GATEWAY_OWN = new Set(SETTING_NAMES);
const isGatewayOwn = (name: string) => GATEWAY_OWN.has(name) || /^AWS_/i.test(name);

/**
 * Secret references on the local platform: `env:<VAR>` from the gateway's environment, `file:<path>` from a
 * file under GATEWAY_SECRET_FILES_DIR (relative to it, or absolute inside it; symlinks are followed and must
 * still land inside). Secrets Manager and SSM references are for the AWS platform.
 */
export class LocalSecretResolver implements SecretResolver {
  readonly #env: Record<string, string | undefined>;
  readonly #filesDir: string | undefined;

  constructor(options: { env: Record<string, string | undefined>; filesDir?: string }) {
    this.#env = options.env;
    this.#filesDir = options.filesDir;
  }

  async resolve(ref: SecretRef): Promise<string> {
    if (ref.scheme === "env") {
      if (isGatewayOwn(ref.name))
        throw new SecretRefError(
          "invalid",
          "env: references may not read the gateway's own settings or AWS credentials.",
        );
      const value = this.#env[ref.name];
      if (!value) throw new SecretRefError("not_found", "The environment variable of the env: reference is not set.");
      return value;
    }
    if (ref.scheme === "file") return this.#readFile(ref.path);
    throw new SecretRefError("unsupported", `${ref.scheme}: references need the AWS platform.`);
  }

  async #readFile(path: string): Promise<string> {
    if (!this.#filesDir)
      throw new SecretRefError("unsupported", "file: references need GATEWAY_SECRET_FILES_DIR to be set.");
    let root: string;
    try {
      root = await realpath(this.#filesDir);
    } catch (error) {
      throw new SecretRefError("unavailable", "GATEWAY_SECRET_FILES_DIR cannot be read.", { cause: error });
    }
    const wanted = isAbsolute(path) ? path : resolve(root, path);
    let real: string;
    try {
      real = await realpath(wanted);
    } catch {
      throw new SecretRefError("not_found", "The file of the file: reference does not exist.");
    }
    // Checked on the real path: `..` is refused when parsed, and a symlink must not lead outside either.
    if (!real.startsWith(root + sep))
      throw new SecretRefError("invalid", "file: references may not leave the secret files directory.");
    let content: Buffer;
    try {
      content = await readFile(real);
    } catch {
      throw new SecretRefError("not_found", "The file of the file: reference cannot be read.");
    }
    if (content.length > MAX_FILE_BYTES)
      throw new SecretRefError("invalid", "The file of the file: reference is too large.");
    // Files written by editors and `echo` end in a newline that is not part of the secret.
    const value = content.toString("utf8").replace(/\r?\n$/, "");
    if (!value) throw new SecretRefError("not_found", "The file of the file: reference is empty.");
    return value;
  }
}
