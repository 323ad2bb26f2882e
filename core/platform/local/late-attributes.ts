import { assembleTranscript } from "../../inference/gateway/stream/transcript.ts";
import { isLateJson } from "../../observe/logs/late-json.ts";
import type { RecordItem } from "../../store/ports.ts";
import type { LateAttribute } from "./record-write-protocol.ts";
import type { StoredRow } from "./sqlite-records.ts";

/** The item's LateJson attributes, as the storage thread receives them (undefined when there is none). */
export function lateAttributes(item: RecordItem): LateAttribute[] | undefined {
  const late: LateAttribute[] = [];
  for (const name in item) {
    const value = item[name];
    if (isLateJson(value)) late.push({ name, payload: value.late });
  }
  return late.length > 0 ? late : undefined;
}

/**
 * Produces a row's late attributes (on the storage thread: off the gateway's event loop) and adds them to its
 * JSON. `data` is an object's JSON text, so each is spliced in before its closing brace.
 */
export function addLateAttributes(row: StoredRow, late: LateAttribute[]): void {
  let data = row.data.slice(0, -1);
  for (const { name, payload } of late) {
    const json = payload.kind === "json-text" ? payload.text : JSON.stringify(assembleTranscript(payload));
    data += `${data.length > 1 ? "," : ""}${JSON.stringify(name)}:${json}`;
  }
  row.data = `${data}}`;
}
