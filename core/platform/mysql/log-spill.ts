import { randomBytes } from "node:crypto";
import { createReadStream, mkdirSync, readdirSync, statSync } from "node:fs";
import { appendFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { RecordRow } from "./mysql-records.ts";

/**
 * A request log the log store did not take: its row, its search index rows (mysql-log-sink.ts; absent in lines
 * buffered by a version without the index: they are made from the row on replay), and its bodies' blob unless
 * that was stored already.
 */
export interface SpilledLog {
  row: RecordRow;
  index?: RecordRow[];
  blob?: { key: string; json: string };
}

/** Bytes of logs that may wait in memory for the disk at once; past it logs are dropped (and counted). */
const MAX_WAITING_BYTES = 32 * 1024 * 1024;
const SEGMENT = /^(\d+)-(\d+)-[0-9a-f]+\.jsonl(?:\.replay-(\d+))?$/;

/**
 * The local-disk buffer of the MySQL log sink (mysql-log-sink.ts): logs the log store could not take are
 * appended, one JSON line each, to segment files in `dir`, up to `maxBytes` in all; beyond that they are
 * dropped and counted. Replay takes the closed segments oldest first, each claimed by renaming it (so two
 * processes sharing the folder never replay one twice), and deletes a segment once the store has all of it.
 * Segments left by an earlier run (the store was down at shutdown, or the process died) are replayed too.
 */
export class LogSpill {
  readonly dir: string;
  readonly #maxBytes: number;
  /** Bytes on disk (and being appended), across every segment this process knows of. */
  #bytes = 0;
  #waitingBytes = 0;
  #current: string | undefined;
  #appending: Promise<void> = Promise.resolve();
  /** Logs dropped because the buffer was full, since start. */
  dropped = 0;

  constructor(dir: string, maxBytes: number) {
    this.dir = dir;
    this.#maxBytes = maxBytes;
    mkdirSync(dir, { recursive: true });
    for (const name of readdirSync(dir)) if (SEGMENT.test(name)) this.#bytes += statSync(join(dir, name)).size;
  }

  /** Bytes buffered on disk now. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Appends the logs that fit; resolves to how many of them (from the first) were kept. The rest are dropped
   * and counted. Appends are written in call order.
   */
  append(logs: SpilledLog[]): Promise<number> {
    const lines: string[] = [];
    let bytes = 0;
    for (const log of logs) {
      const line = `${JSON.stringify(log)}\n`;
      const size = Buffer.byteLength(line);
      if (this.#bytes + bytes + size > this.#maxBytes || this.#waitingBytes + bytes + size > MAX_WAITING_BYTES) break;
      lines.push(line);
      bytes += size;
    }
    this.dropped += logs.length - lines.length;
    if (lines.length === 0) return Promise.resolve(0);
    this.#bytes += bytes;
    this.#waitingBytes += bytes;
    const written = this.#appending.then(async () => {
      this.#current ??= join(this.dir, `${Date.now()}-${process.pid}-${randomBytes(4).toString("hex")}.jsonl`);
      try {
        await appendFile(this.#current, lines.join(""));
      } catch (error) {
        this.#bytes -= bytes;
        this.dropped += lines.length;
        throw error;
      } finally {
        this.#waitingBytes -= bytes;
      }
    });
    this.#appending = written.catch(() => {});
    return written.then(() => lines.length);
  }

  /**
   * Closes the segment being written and claims every segment waiting for replay (this process's and those
   * left by processes that are gone), oldest first.
   */
  async claimSegments(): Promise<string[]> {
    await this.#appending;
    this.#current = undefined;
    const claimed: Array<{ path: string; created: number }> = [];
    for (const name of readdirSync(this.dir)) {
      const match = SEGMENT.exec(name);
      if (!match) continue;
      // Written or being replayed by another process that is still running: leave it to that process.
      const owner = match[3] === undefined ? Number(match[2]) : Number(match[3]);
      if (owner !== process.pid && isAlive(owner)) continue;
      const base = name.replace(/\.replay-\d+$/, "");
      const path = join(this.dir, `${base}.replay-${process.pid}`);
      try {
        if (name !== `${base}.replay-${process.pid}`) await rename(join(this.dir, name), path);
      } catch {
        continue; // another process claimed it first
      }
      claimed.push({ path, created: Number(match[1]) });
    }
    return claimed.sort((a, b) => a.created - b.created).map((segment) => segment.path);
  }

  /** The logs of a claimed segment, in order (a line cut short by a crash is skipped). */
  async *read(path: string): AsyncGenerator<SpilledLog> {
    const lines = createInterface({ input: createReadStream(path, "utf8"), crlfDelay: Number.POSITIVE_INFINITY });
    for await (const line of lines) {
      if (!line) continue;
      try {
        yield JSON.parse(line) as SpilledLog;
      } catch {
        console.error(`log buffer: skipped a line of ${path} that is not whole JSON`);
      }
    }
  }

  /** Deletes a segment the store now has whole. */
  async remove(path: string): Promise<void> {
    const size = statSync(path, { throwIfNoEntry: false })?.size ?? 0;
    await rm(path, { force: true });
    this.#bytes = Math.max(0, this.#bytes - size);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
