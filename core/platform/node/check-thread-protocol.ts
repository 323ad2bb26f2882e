import type { CheckResult, ThreadedCheckInput } from "../../guardrails/types.ts";

/**
 * The messages between the gateway and a guardrail check thread (check-threads.ts, check-worker.ts). The judged
 * text is most often one of the parts (a chat request's last message): it is then sent once, as `textPart`, the
 * index of that part, and `input.text` is left empty.
 */
export interface CheckJobMessage {
  job: number;
  id: string;
  parameters: unknown;
  input: ThreadedCheckInput;
  textPart?: number;
}

export type CheckReplyMessage = { job: number; result: CheckResult } | { job: number; error: string };

/** The message for one check, its judged text sent once. */
export function checkJobMessage(
  job: number,
  check: { id: string; parameters: unknown; input: ThreadedCheckInput },
): CheckJobMessage {
  const { input } = check;
  const textPart = input.text.length > 0 ? input.parts.indexOf(input.text) : -1;
  if (textPart < 0) return { job, ...check };
  return { job, id: check.id, parameters: check.parameters, input: { ...input, text: "" }, textPart };
}
