import type { ChatUsage } from "../../../providers/types.ts";

/** Usages of several model calls added up (token details kept where any step reported them). */
export function sumUsage(usages: Array<ChatUsage | undefined>): ChatUsage | undefined {
  const present = usages.filter((usage): usage is ChatUsage => usage !== undefined);
  if (present.length === 0) return undefined;
  const total: ChatUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  let cached: number | undefined;
  let reasoning: number | undefined;
  for (const usage of present) {
    total.prompt_tokens += usage.prompt_tokens ?? 0;
    total.completion_tokens += usage.completion_tokens ?? 0;
    total.total_tokens += usage.total_tokens ?? (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0);
    const cachedHere = usage.prompt_tokens_details?.cached_tokens;
    if (cachedHere !== undefined) cached = (cached ?? 0) + cachedHere;
    const reasoningHere = usage.completion_tokens_details?.reasoning_tokens;
    if (reasoningHere !== undefined) reasoning = (reasoning ?? 0) + reasoningHere;
  }
  if (cached !== undefined) total.prompt_tokens_details = { cached_tokens: cached };
  if (reasoning !== undefined) total.completion_tokens_details = { reasoning_tokens: reasoning };
  return total;
}
