import * as z from "zod/mini";
import { int } from "../../../http/zod-mini.ts";
import { temperature, topP } from "../../gateway/schemas/common.ts";

/**
 * The body of POST /v1beta/models/{model}:generateContent and :streamGenerateContent (Google's
 * GenerateContentRequest, camelCase as the @google/genai SDK sends it; the model is in the path). Objects are
 * loose: fields this schema does not name (safetySettings entries, labels, newer generationConfig fields, tool
 * kinds like googleSearch) reach Google and Vertex AI as they are; a translated provider refuses what chat cannot
 * carry (to-chat.ts). Parts are checked for the fields they name.
 */

const functionCall = z.looseObject({
  id: z.optional(z.string()),
  name: z.string().check(z.minLength(1)),
  args: z.optional(z.record(z.string(), z.unknown())),
});

const functionResponse = z.looseObject({
  id: z.optional(z.string()),
  name: z.string().check(z.minLength(1)),
  response: z.optional(z.record(z.string(), z.unknown())),
});

const part = z.looseObject({
  text: z.optional(z.string()),
  thought: z.optional(z.boolean()),
  thoughtSignature: z.optional(z.string()),
  inlineData: z.optional(z.looseObject({ mimeType: z.string(), data: z.string() })),
  fileData: z.optional(z.looseObject({ mimeType: z.optional(z.string()), fileUri: z.string() })),
  functionCall: z.optional(functionCall),
  functionResponse: z.optional(functionResponse),
});

/** `function` is the role older clients give function responses; Google reads it as the user's turn. */
const content = z.looseObject({
  role: z.optional(z.enum(["user", "model", "function"])),
  parts: z.array(part),
});

const functionDeclaration = z.looseObject({
  name: z.string().check(z.minLength(1), z.maxLength(128)),
  description: z.optional(z.string()),
  parameters: z.optional(z.record(z.string(), z.unknown())),
  parametersJsonSchema: z.optional(z.unknown()),
});

const tool = z.looseObject({ functionDeclarations: z.optional(z.array(functionDeclaration)) });

const toolConfig = z.looseObject({
  functionCallingConfig: z.optional(
    z.looseObject({
      mode: z.optional(z.enum(["MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED"])),
      allowedFunctionNames: z.optional(z.array(z.string())),
    }),
  ),
});

const generationConfig = z.looseObject({
  temperature: z.optional(temperature),
  topP: z.optional(topP),
  topK: z.optional(int(z.minimum(1))),
  candidateCount: z.optional(int(z.minimum(1), z.maximum(8))),
  maxOutputTokens: z.optional(int(z.minimum(1))),
  stopSequences: z.optional(z.array(z.string()).check(z.maxLength(5, "at most 5 stop sequences"))),
  presencePenalty: z.optional(z.number()),
  frequencyPenalty: z.optional(z.number()),
  seed: z.optional(int()),
  responseMimeType: z.optional(z.string()),
  responseSchema: z.optional(z.record(z.string(), z.unknown())),
  responseJsonSchema: z.optional(z.unknown()),
  responseLogprobs: z.optional(z.boolean()),
  logprobs: z.optional(int(z.minimum(0), z.maximum(20))),
  responseModalities: z.optional(z.array(z.string())),
  thinkingConfig: z.optional(
    z.looseObject({
      includeThoughts: z.optional(z.boolean()),
      thinkingBudget: z.optional(int(z.minimum(-1))),
      thinkingLevel: z.optional(z.string()),
    }),
  ),
});

export const geminiRequest = z.looseObject({
  contents: z.array(content).check(z.minLength(1, "contents must hold at least one turn")),
  systemInstruction: z.optional(z.looseObject({ role: z.optional(z.string()), parts: z.array(part) })),
  tools: z.optional(z.array(tool)),
  toolConfig: z.optional(toolConfig),
  generationConfig: z.optional(generationConfig),
  safetySettings: z.optional(z.array(z.looseObject({}))),
  cachedContent: z.optional(z.string()),
});

export type GeminiRequest = z.infer<typeof geminiRequest>;

/**
 * The body of :countTokens: the turns as `contents`, or a whole request as `generateContentRequest` (Google
 * accepts either; the @google/genai SDK sends `contents`).
 */
export const geminiCountTokensRequest = z
  .looseObject({
    contents: z.optional(z.array(content)),
    generateContentRequest: z.optional(z.looseObject({ contents: z.array(content) })),
  })
  .check(
    z.refine((body) => body.contents !== undefined || body.generateContentRequest !== undefined, {
      message: "send contents or generateContentRequest",
      path: ["contents"],
    }),
  );
