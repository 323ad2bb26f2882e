import { parentPort } from "node:worker_threads";
import { findCheck } from "../../guardrails/checks/registry.ts";
import type { CheckEnvironment, CheckResult } from "../../guardrails/types.ts";
import type { CheckJobMessage, CheckReplyMessage } from "./check-thread-protocol.ts";

/**
 * A guardrail check thread (check-threads.ts starts it): judges one self-contained check at a time on a long
 * text, so the gateway's event loop never holds it. Its time limit is enforced from outside, by stopping the
 * thread: the check's own signal here never aborts.
 */

const port = parentPort!;
const NEVER = new AbortController().signal;

/** Self-contained checks never reach beyond their input (CheckDefinition.selfContained); this says so if one tries. */
const unavailable = (): never => {
  throw new Error("a check judged on a guardrail thread cannot make outbound calls");
};
const NO_ENVIRONMENT: CheckEnvironment = { postJson: unavailable, getJson: unavailable, infer: unavailable };

port.on("message", async (message: CheckJobMessage) => {
  let reply: CheckReplyMessage;
  try {
    reply = { job: message.job, result: await judge(message) };
  } catch (error) {
    reply = { job: message.job, error: (error as Error)?.message || String(error) };
  }
  port.postMessage(reply);
});

async function judge({ id, parameters, input, textPart }: CheckJobMessage): Promise<CheckResult> {
  const check = await findCheck(id);
  if (!check) throw new Error(`unknown check '${id}'`);
  const text = textPart === undefined ? input.text : input.parts[textPart]!;
  return check.run(
    { ...input, text, request: {}, headers: new Headers(), signal: NEVER, env: NO_ENVIRONMENT },
    parameters,
  );
}
