import { ConditionFailedError, type Records } from "../../store/ports.ts";
import { Conflict, NotFound } from "../errors.ts";

/**
 * The versions of a saved prompt or partial (core/control/prompts/store.ts), for both services: each version
 * is written once (a concurrent writer of the same number gets Conflict), read or NotFound, listed newest first.
 */

type Kind = "prompt" | "partial";

/** Writes a version record once: a second writer of the same number (a concurrent update) gets Conflict. */
export async function writeVersionOnce<T extends { pk: string; sk: string }>(
  records: Records,
  kind: Kind,
  record: T,
): Promise<T> {
  try {
    await records.put({ ...record }, { exists: false });
  } catch (error) {
    if (error instanceof ConditionFailedError)
      throw new Conflict(`The ${kind} was changed concurrently; read it again and retry.`, { code: "conflict" });
    throw error;
  }
  return record;
}

/** The version `read` found, or NotFound naming the prompt or partial and the version. */
export async function versionOrNotFound<T>(
  read: Promise<T | undefined>,
  kind: Kind,
  owner: { id: string; slug?: string },
  version: number,
): Promise<T> {
  const record = await read;
  if (!record) {
    const name = `${kind[0]!.toUpperCase()}${kind.slice(1)}`;
    throw new NotFound(`${name} '${owner.slug ?? owner.id}' has no version ${version}.`, {
      code: "version_not_found",
    });
  }
  return record;
}

/** Every version in `partition` (a prompt's or a partial's), newest first. */
export async function allVersions<T>(records: Records, partition: string): Promise<T[]> {
  const versions: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({ partition, prefix: "VERSION#", order: "desc", limit: 1000, cursor });
    versions.push(...(page.items as unknown as T[]));
    cursor = page.cursor;
  } while (cursor);
  return versions;
}
