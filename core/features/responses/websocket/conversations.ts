import { continuedConversation, inputItemsOf, sendableHistory } from "../conversation.ts";

/**
 * The memory of one Responses WebSocket: what a response made with `store: false` on this socket said, so that
 * the next turn may continue it with `previous_response_id` (OpenAI keeps the same connection-local state, which
 * is what lets WebSocket mode work with store=false and zero data retention). Stored responses need none of it:
 * the turn's own HTTP request finds them in the gateway's store.
 *
 * Bounded: the most recent responses only (a client continues the last one, or forks from a recent one).
 */

type Json = Record<string, any>;

/** Responses remembered per socket. */
const REMEMBERED = 16;

/** A turn's body as sent, with what is needed to show its events and remember its answer. */
export interface PreparedTurn {
  body: Json;
  /** Every item the model is sent (known only when the turn continues a remembered response or starts anew). */
  context: Json[] | undefined;
  /** Whether the answer is to be remembered (the turn is not stored). */
  unstored: boolean;
  /** An event as the client sees it: the chain it asked for put back where the socket expanded it. */
  shown(event: Json): Json;
}

export class SocketConversations {
  readonly #remembered = new Map<string, Json[]>();

  /** The turn's body: a remembered `previous_response_id` expanded into the input, anything else as it came. */
  prepare(fields: Json): PreparedTurn {
    const previous = typeof fields.previous_response_id === "string" ? fields.previous_response_id : undefined;
    const unstored = fields.store === false;
    const history = previous ? this.#remembered.get(previous) : undefined;
    if (!history) {
      return { body: fields, context: previous ? undefined : inputItemsOf(fields.input), unstored, shown: same };
    }
    const context = [...history, ...inputItemsOf(fields.input)];
    const { previous_response_id: _previous, ...rest } = fields;
    return {
      body: { ...rest, input: context },
      context,
      unstored,
      shown: (event) =>
        event.response && typeof event.response === "object"
          ? { ...event, response: { ...event.response, previous_response_id: previous } }
          : event,
    };
  }

  /** Remembers a finished unstored response, for a continuation on this socket. */
  remember(turn: PreparedTurn, response: Json | undefined): void {
    if (!turn.unstored || !turn.context || typeof response?.id !== "string") return;
    this.#remembered.delete(response.id);
    this.#remembered.set(response.id, sendableHistory(continuedConversation(turn.context, response.output)));
    while (this.#remembered.size > REMEMBERED) this.#remembered.delete(this.#remembered.keys().next().value!);
  }
}

const same = (event: Json): Json => event;
