/** Where a request log lives: its record's key and its bodies' blob. */

export const logKey = (id: string) => ({ pk: `LOG#${id}`, sk: "LOG" });

export const bodiesBlobKey = (id: string, createdAt: string) => `logs/${createdAt.slice(0, 10)}/${id}.json`;
