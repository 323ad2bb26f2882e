import type { ScheduledTask } from "../../workers/scheduled-task.ts";
import type { Database } from "./database.ts";
import type { MysqlVectorIndex } from "./mysql-vector-index.ts";

/** Rows deleted per statement, so no sweep holds many locks or a long transaction. */
const DELETE_ROWS = 2000;

/**
 * Deletes what has expired: records and request logs past their `ttl`, counters past `expires_at`, semantic
 * cache vectors (expired, then past the entry limits). Reads already treat all of these as absent; this keeps
 * the tables from growing without bound. Run as a claimed scheduled task (one process at a time).
 */
export function housekeepingTask(stores: {
  database: Database;
  logDatabase: Database;
  vectors: MysqlVectorIndex;
}): ScheduledTask {
  return {
    name: "mysql-housekeeping",
    everySeconds: 60,
    async run(_services, signal) {
      const now = Date.now() / 1000;
      const sweeps: Array<[Database, string]> = [
        [stores.database, "DELETE FROM records WHERE ttl < ? LIMIT ?"],
        [stores.database, "DELETE FROM counters WHERE expires_at < ? LIMIT ?"],
        [stores.logDatabase, "DELETE FROM request_logs WHERE ttl < ? LIMIT ?"],
      ];
      for (const [database, sql] of sweeps) {
        for (;;) {
          if (signal.aborted) return;
          const result = await database.run<{ affectedRows: number }>("housekeeping", sql, [now, DELETE_ROWS]);
          if (result.affectedRows < DELETE_ROWS) break;
        }
      }
      await stores.vectors.sweep();
    },
  };
}
