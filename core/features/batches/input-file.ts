import { fileStoreOf } from "../files/file-store.ts";
import type { StoredFile } from "../files/types.ts";
import type { Services } from "../../services.ts";
import type { BatchRecord } from "./batch-store.ts";
import type { BatchInputLine } from "./types.ts";
import { inputLines } from "./validate-input.ts";

export interface OpenedInput {
  file: StoredFile;
  /** The file's bytes, as uploaded (a new stream on each call). */
  content(): Promise<ReadableStream<Uint8Array>>;
  /** The validated lines, read again from the file on each call. */
  lines(): AsyncIterable<BatchInputLine>;
}

/** A line longer than a JSON request body may be could not be sent as one: the same limit applies. */
export const maxLineBytes = (services: Services) => services.settings.GATEWAY_MAX_JSON_BODY_BYTES;

/** The batch's input file, read as a stream each time; undefined when it was deleted. */
export async function openInput(services: Services, record: BatchRecord): Promise<OpenedInput | undefined> {
  const files = fileStoreOf(services);
  const file = await files.get(record.owner, record.batch.input_file_id);
  if (!file) return undefined;
  const content = async () => {
    const opened = await files.content(record.owner, record.batch.input_file_id);
    if (!opened) throw new Error(`the input file ${record.batch.input_file_id} was deleted`);
    return opened.body;
  };
  return {
    file,
    content,
    async *lines() {
      yield* inputLines(await content(), record.batch.endpoint, maxLineBytes(services));
    },
  };
}
