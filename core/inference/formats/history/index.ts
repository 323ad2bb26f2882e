import type { ProviderBoundItem, RouteKind } from "../../../providers/types.ts";
import { fitChatHistory } from "./chat.ts";
import type { DroppedHistory } from "./counts.ts";
import { messagesHistoryDrops } from "./messages.ts";
import { fitResponsesHistory } from "./responses.ts";

export { DROPPED_HISTORY_HEADER, type DroppedHistory, droppedHistoryHeader } from "./counts.ts";

/**
 * Agent history across providers: a conversation may hold items only the provider (or the account) that made
 * them can take back: Anthropic's thinking blocks and their signatures, OpenAI's encrypted reasoning and item
 * references, Gemini's thought signatures, cache breakpoints with a TTL. When a request (or a fallback leg) goes
 * to a target that cannot take them, they are dropped, the same way every time, and the answer says what was
 * dropped (`x-gateway-dropped-history`); a target that can take them gets the body untouched, byte for byte.
 */

export interface HistoryTarget {
  /** The provider speaks the request's format itself (not translated through its chat adapter); chat: always. */
  native: boolean;
  /** Chat: the provider-bound items the target's chat adapter keeps (RouteAdapter.keepsHistory). */
  keeps?: ReadonlySet<ProviderBoundItem>;
  /** Responses: this target (provider and integration) made the stored conversation in front of the input. */
  madeHistory: boolean;
}

/**
 * The stored conversation a Responses request continues (`previous_response_id`), which the gateway put in front
 * of its input, and the target that made it.
 */
export interface ConversationOrigin {
  /** How many items at the start of `input` came from the store. */
  items: number;
  provider?: string;
  /** The key of the target that answered (core/inference/gateway/target-key.ts), when it was recorded. */
  target?: string;
}

export function fitHistory(
  route: RouteKind,
  body: Record<string, any>,
  target: HistoryTarget,
  historyItems = 0,
): { body: Record<string, any>; dropped?: DroppedHistory } {
  switch (route) {
    case "chat":
      return fitChatHistory(body, target.keeps);
    case "messages":
      return target.native ? { body } : { body, dropped: messagesHistoryDrops(body) };
    case "responses":
      return fitResponsesHistory(body, target, historyItems);
    default:
      return { body };
  }
}
