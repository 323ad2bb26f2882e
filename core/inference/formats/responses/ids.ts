import { sha256Hex } from "../../../util/ids.ts";

/**
 * Ids of a translated Response and of its output items. They are derived from the gateway's request id (not
 * random) so that the JSON answer, the stream and a replay of one request name the same objects: the stream's
 * final Response equals the one built from the same answer as JSON.
 */

/** OpenAI's ids are a prefix and 48 hex digits (`resp_...`, `msg_...`, `fc_...`, `rs_...`). */
const HEX_DIGITS = 48;

export function newResponseId(requestId: string): string {
  return `resp_${sha256Hex(`response:${requestId}`).slice(0, HEX_DIGITS)}`;
}

/** The kinds of output item a translated answer holds, by their id prefix. */
export type OutputItemPrefix = "msg" | "fc" | "rs";

/** The id of the `ordinal`-th output item of its kind (counted from 0) in the response to `requestId`. */
export function outputItemId(requestId: string, prefix: OutputItemPrefix, ordinal: number): string {
  return `${prefix}_${sha256Hex(`${prefix}:${ordinal}:${requestId}`).slice(0, HEX_DIGITS)}`;
}

/** A `call_id` for a tool call that came without one (a provider that names no call). */
export function fallbackCallId(requestId: string, ordinal: number): string {
  return `call_${sha256Hex(`call:${ordinal}:${requestId}`).slice(0, 24)}`;
}
