import type { Database } from "./database.ts";

/**
 * The MySQL store's schema, as numbered migrations applied in order on start (createMysqlStores). Each
 * replica runs `migrate`: a named lock (GET_LOCK) lets one apply what is missing while the others wait, and
 * `gateway_schema` records every version applied. A database already at a version this code does not know (a
 * newer gateway migrated it) is refused rather than used. Append migrations; never edit an applied one.
 *
 * Key columns are VARBINARY: they compare byte by byte (UTF-8 byte order is code point order, as DynamoDB and
 * SQLite sort), with no collation folding case or padding spaces. 1024 bytes each, as DynamoDB's sort keys;
 * two of them fit InnoDB's 3072-byte index key.
 */
export const MIGRATIONS: ReadonlyArray<{ version: number; name: string; statements: string[] }> = [
  {
    version: 1,
    name: "records, request logs, counters, queues, vectors",
    statements: [recordsTable("records"), recordsTable("request_logs"), countersTable(), queueTable(), vectorsTable()],
  },
];

export const SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;

function recordsTable(name: string): string {
  return `CREATE TABLE IF NOT EXISTS ${name} (
    pk VARBINARY(1024) NOT NULL,
    sk VARBINARY(1024) NOT NULL,
    gsi1pk VARBINARY(1024) NULL,
    gsi1sk VARBINARY(1024) NULL,
    ttl DOUBLE NULL,
    data LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    PRIMARY KEY (pk, sk),
    KEY ${name}_gsi1 (gsi1pk, gsi1sk),
    KEY ${name}_ttl (ttl)
  ) ENGINE=InnoDB ROW_FORMAT=DYNAMIC DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`;
}

function countersTable(): string {
  return `CREATE TABLE IF NOT EXISTS counters (
    k VARBINARY(1024) NOT NULL PRIMARY KEY,
    value DOUBLE NOT NULL,
    expires_at DOUBLE NULL,
    KEY counters_expiry (expires_at)
  ) ENGINE=InnoDB ROW_FORMAT=DYNAMIC`;
}

function queueTable(): string {
  return `CREATE TABLE IF NOT EXISTS queue_messages (
    seq BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    id CHAR(36) CHARACTER SET ascii NOT NULL,
    queue VARBINARY(255) NOT NULL,
    body LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    visible_at BIGINT NOT NULL,
    receipt CHAR(36) CHARACTER SET ascii NULL,
    attempts INT NOT NULL DEFAULT 0,
    UNIQUE KEY queue_messages_id (id),
    UNIQUE KEY queue_messages_receipt (receipt),
    KEY queue_messages_visible (queue, visible_at, seq)
  ) ENGINE=InnoDB ROW_FORMAT=DYNAMIC`;
}

function vectorsTable(): string {
  return `CREATE TABLE IF NOT EXISTS cache_vectors (
    seq BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
    scope VARBINARY(1024) NOT NULL,
    id VARBINARY(1024) NOT NULL,
    dimension INT NOT NULL,
    vector MEDIUMBLOB NOT NULL,
    expires_at BIGINT NOT NULL,
    UNIQUE KEY cache_vectors_key (scope, id),
    KEY cache_vectors_scope_age (scope, seq),
    KEY cache_vectors_expiry (expires_at)
  ) ENGINE=InnoDB ROW_FORMAT=DYNAMIC`;
}

/** How long a replica waits for another that is migrating the same database (seconds). */
const LOCK_WAIT_SECONDS = 120;

/** Brings the database to SCHEMA_VERSION (see the file comment); returns the versions it applied. */
export async function migrate(database: Database): Promise<number[]> {
  const pool = database.pool;
  const connection = await pool.getConnection();
  try {
    const [[lock]] = (await connection.query("SELECT GET_LOCK('gateway_schema', ?) AS locked", [
      LOCK_WAIT_SECONDS,
    ])) as unknown as [[{ locked: number | null }]];
    if (lock?.locked !== 1) throw new Error("another gateway has been migrating the database schema for too long");
    try {
      await connection.query(
        `CREATE TABLE IF NOT EXISTS gateway_schema (
           version INT NOT NULL PRIMARY KEY,
           name VARCHAR(200) NOT NULL,
           applied_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP
         ) ENGINE=InnoDB`,
      );
      const [rows] = (await connection.query("SELECT MAX(version) AS version FROM gateway_schema")) as unknown as [
        Array<{ version: number | null }>,
      ];
      const current = rows[0]?.version ?? 0;
      if (current > SCHEMA_VERSION) {
        throw new Error(
          `the database schema is at version ${current}, newer than this gateway knows (${SCHEMA_VERSION}): run the newer gateway`,
        );
      }
      const applied: number[] = [];
      for (const migration of MIGRATIONS) {
        if (migration.version <= current) continue;
        // DDL commits by itself in MySQL; CREATE ... IF NOT EXISTS makes a migration that died half way safe to rerun.
        for (const statement of migration.statements) await connection.query(statement);
        await connection.query("INSERT INTO gateway_schema (version, name) VALUES (?, ?)", [
          migration.version,
          migration.name,
        ]);
        applied.push(migration.version);
      }
      return applied;
    } finally {
      await connection.query("SELECT RELEASE_LOCK('gateway_schema')").catch(() => {});
    }
  } finally {
    connection.release();
  }
}
