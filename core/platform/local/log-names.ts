import type { SqliteDatabase, SqliteStatement } from "./sqlite.ts";

/** Names kept in memory per connection; beyond it the cache starts again (names are few but unbounded). */
const MAX_CACHED = 50_000;

/**
 * The integers of `log_names` (log-index-schema.ts), for the index's writer: a name gets its number the first
 * time a log has it. A number is cached only once the transaction that made it has committed: a rolled-back
 * insert frees its number for another name, and a cached number must never name two things.
 */
export class LogNameWriter {
  readonly #find: SqliteStatement;
  readonly #insert: SqliteStatement;
  #committed = new Map<string, number>();
  /** Numbers made or read in the open transaction. */
  #fresh = new Map<string, number>();

  constructor(db: SqliteDatabase) {
    this.#find = db.prepare("SELECT n FROM log_names WHERE name = ?").pluck();
    this.#insert = db.prepare("INSERT INTO log_names (name) VALUES (?)");
  }

  /** The name's number, made now if it has none (inside the caller's write transaction). */
  number(name: string): number {
    let number = this.#committed.get(name) ?? this.#fresh.get(name);
    if (number !== undefined) return number;
    number = (this.#find.get(name) as number | undefined) ?? Number(this.#insert.run(name).lastInsertRowid);
    this.#fresh.set(name, number);
    return number;
  }

  committed(): void {
    if (this.#committed.size + this.#fresh.size > MAX_CACHED) this.#committed = new Map();
    for (const [name, number] of this.#fresh) this.#committed.set(name, number);
    this.#fresh.clear();
  }

  rolledBack(): void {
    this.#fresh.clear();
  }
}

/** The index's reader side: names by number and numbers by name, as committed (a reader sees nothing else). */
export class LogNameReader {
  readonly #byName: SqliteStatement;
  readonly #byNumber: SqliteStatement;
  #names = new Map<number, string>();
  #numbers = new Map<string, number>();

  constructor(db: SqliteDatabase) {
    this.#byName = db.prepare("SELECT n FROM log_names WHERE name = ?").pluck();
    this.#byNumber = db.prepare("SELECT name FROM log_names WHERE n = ?").pluck();
  }

  /** The name's number, or undefined when no log has it. */
  number(name: string): number | undefined {
    let number = this.#numbers.get(name);
    if (number === undefined) {
      number = this.#byName.get(name) as number | undefined;
      if (number !== undefined) this.#remember(name, number);
    }
    return number;
  }

  name(number: number | null): string | undefined {
    if (number === null) return undefined;
    let name = this.#names.get(number);
    if (name === undefined) {
      name = this.#byNumber.get(number) as string | undefined;
      if (name === undefined) throw new Error(`log index: no name numbered ${number}`);
      this.#remember(name, number);
    }
    return name;
  }

  #remember(name: string, number: number): void {
    if (this.#names.size >= MAX_CACHED) {
      this.#names = new Map();
      this.#numbers = new Map();
    }
    this.#names.set(number, name);
    this.#numbers.set(name, number);
  }
}
