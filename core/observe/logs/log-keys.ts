/** Where a request log lives: its record's key, its day in the organisation's index, its bodies' blob. */

export const logKey = (id: string) => ({ pk: `LOG#${id}`, sk: "LOG" });

/** The index partition of an organisation's logs of one UTC day (gsi1pk); gsi1sk is `<createdAt>#<id>`. */
export function dayPartition(organisationId: string, timeMs: number): string {
  return `LOGS#${organisationId}#${new Date(timeMs).toISOString().slice(0, 10)}`;
}

export const bodiesBlobKey = (id: string, createdAt: string) => `logs/${createdAt.slice(0, 10)}/${id}.json`;
