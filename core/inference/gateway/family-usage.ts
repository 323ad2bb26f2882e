import { countTokensOfParts } from "../catalog/tokens.ts";
import type { ChatUsage, MeteredUsage, RouteKind } from "../../providers/types.ts";
import { audioSeconds } from "./audio-duration.ts";
import { isUploadedFile } from "../../providers/uploaded-file.ts";

/**
 * The default meter of each non-chat family: what a request used, read from OpenAI-shaped answers (and the
 * request when the answer says nothing). A provider whose answer says it differently declares its own
 * RouteAdapter.usageOf. `answer` is undefined for answers relayed as bytes (speech audio, text transcripts).
 */
export async function familyUsageOf(
  route: RouteKind,
  body: Record<string, any>,
  answer: any,
): Promise<MeteredUsage | undefined> {
  switch (route) {
    case "image_generations":
    case "image_edits":
    case "image_variations":
      return {
        units: { images: Array.isArray(answer?.data) ? answer.data.length : numberOr(body.n, 1) },
        usage: tokenUsageOf(answer?.usage),
        priceKey: { size: stringOr(body.size), quality: stringOr(body.quality) },
      };
    case "speech":
      return { units: { characters: typeof body.input === "string" ? [...body.input].length : 0 } };
    case "transcriptions":
    case "translations": {
      const reported = numberOr(answer?.duration, numberOr(answer?.usage?.seconds, undefined));
      const seconds = reported ?? (isUploadedFile(body.file) ? await audioSeconds(body.file) : undefined);
      return { units: seconds === undefined ? {} : { seconds }, usage: tokenUsageOf(answer?.usage) };
    }
    case "rerank":
      return {
        units: { searches: numberOr(answer?.meta?.billed_units?.search_units, 1) },
        usage: tokenUsageOf(answer?.usage),
      };
    case "ocr":
      return {
        units: {
          pages: numberOr(
            answer?.usage_info?.pages_processed,
            Array.isArray(answer?.pages) ? answer.pages.length : undefined,
          ),
        },
      };
    case "moderations": {
      // Units (none) so that a unit price row prices the request: OpenAI's free models, Mistral's per token.
      const reported = tokenUsageOf(answer?.usage);
      if (reported) return { units: {}, usage: reported };
      const prompt = await countTokensOfParts(String(body.model ?? ""), moderatedTexts(body.input));
      return {
        units: {},
        usage: { prompt_tokens: prompt, completion_tokens: 0, total_tokens: prompt },
        estimated: true,
      };
    }
    default:
      return undefined;
  }
}

/**
 * Token usage in any of the shapes these families report it (`input_tokens`/`output_tokens` of gpt-image and
 * gpt-4o-transcribe, `prompt_tokens`, or `total_tokens` alone as Jina and Voyage report rerank) as chat usage.
 */
export function tokenUsageOf(usage: any): ChatUsage | undefined {
  if (!usage || typeof usage !== "object") return undefined;
  const input = numberOr(usage.input_tokens, numberOr(usage.prompt_tokens, undefined));
  const output = numberOr(usage.output_tokens, numberOr(usage.completion_tokens, 0))!;
  const total = numberOr(usage.total_tokens, undefined);
  if (input === undefined && total === undefined) return undefined;
  const prompt = input ?? Math.max(0, total! - output);
  return { prompt_tokens: prompt, completion_tokens: output, total_tokens: total ?? prompt + output };
}

/** The texts of a moderation input: a string, strings, or OpenAI's multimodal parts (their text parts). */
function moderatedTexts(input: unknown): string[] {
  if (typeof input === "string") return [input];
  if (!Array.isArray(input)) return [];
  return input.flatMap((item) =>
    typeof item === "string" ? [item] : typeof item?.text === "string" ? [item.text as string] : [],
  );
}

function numberOr<T extends number | undefined>(value: unknown, fallback: T): number | T {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : fallback;
}

function stringOr(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}
