import { readFile, realpath } from "node:fs/promises";
import { isAbsolute, resolve, sep } from "node:path";
import { SETTING_NAMES } from "../../config/settings.ts";
import { type SecretRef, SecretRefError, type SecretResolver } from "../../store/secret-refs.ts";

/** The largest secret file read (service account JSON files are a few KiB). */
const MAX_FILE_BYTES = 64 * 1024;

/**
 * Variables an `env:` reference may never read, whatever the prefix: the gateway's own settings (master key,
 * bootstrap admin key...) and the process's AWS credentials. Otherwise whoever may save a provider could send
 * them to a custom host.
 */
const GATEWAY_OWN = new Set(SETTING_NAMES);
const isGatewayOwn = (name: string) => GATEWAY_OWN.has(name) || /^AWS_/i.test(name);

/**
 * Secret references on the local platform, each kind only inside the namespace the operator configured:
 * - `env:<VAR>` from the gateway's environment, only for names starting with GATEWAY_SECRET_REF_ENV_PREFIX
 *   (unset: no `env:` reference at all; the process environment at large holds HOME, PATH, database URLs and
 *   the operator's own provider keys, none of which a tenant may send to a host it chooses);
 * - `file:<path>` from a file under GATEWAY_SECRET_FILES_DIR (relative to it, or absolute inside it; symlinks
 *   are followed and must still land inside).
 * Secrets Manager and SSM references are for the AWS platform.
 */
export class LocalSecretResolver implements SecretResolver {
  readonly #env: Record<string, string | undefined>;
  readonly #envPrefix: string;
  readonly #filesDir: string | undefined;

  constructor(options: { env: Record<string, string | undefined>; envPrefix?: string; filesDir?: string }) {
    this.#env = options.env;
    this.#envPrefix = options.envPrefix ?? "";
    this.#filesDir = options.filesDir;
  }

  admit(ref: SecretRef): void {
    if (ref.scheme === "env") {
      if (!this.#envPrefix)
        throw new SecretRefError("unsupported", "env: references need GATEWAY_SECRET_REF_ENV_PREFIX to be set.");
      if (!ref.name.startsWith(this.#envPrefix))
        throw new SecretRefError("invalid", "env: references must name a variable under the configured prefix.");
      if (isGatewayOwn(ref.name))
        throw new SecretRefError(
          "invalid",
          "env: references may not read the gateway's own settings or AWS credentials.",
        );
      return;
    }
    if (ref.scheme === "file") {
      if (!this.#filesDir)
        throw new SecretRefError("unsupported", "file: references need GATEWAY_SECRET_FILES_DIR to be set.");
      if (isAbsolute(ref.path) && !resolve(ref.path).startsWith(resolve(this.#filesDir) + sep))
        throw new SecretRefError("invalid", "file: references may not leave the secret files directory.");
      return;
    }
    throw new SecretRefError("unsupported", `${ref.scheme}: references need the AWS platform.`);
  }

  async resolve(ref: SecretRef): Promise<string> {
    this.admit(ref);
    if (ref.scheme === "env") {
      const value = this.#env[ref.name];
      if (!value) throw new SecretRefError("not_found", "The environment variable of the env: reference is not set.");
      return value;
    }
    return this.#readFile((ref as { path: string }).path);
  }

  async #readFile(path: string): Promise<string> {
    let root: string;
    try {
      root = await realpath(this.#filesDir!);
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
