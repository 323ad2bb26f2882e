import { ownerKey } from "../../auth/resource-owner.ts";
import { isPlainObject } from "../../inference/routing/query.ts";
import { OWNED_OBJECTS, type AssistantsOperation } from "./operations.ts";
import { type CallScope, finishedRunOf, recordRunUsage } from "./run-usage.ts";

/** Records the owner of an object a call created; a run made with its thread (`/threads/runs`) brings the thread. */
export async function claimCreated(answer: Record<string, unknown>, scope: CallScope): Promise<void> {
  const kind = typeof answer.object === "string" ? OWNED_OBJECTS[answer.object] : undefined;
  if (!kind || typeof answer.id !== "string") return;
  const claims = [scope.owners.claim(answer.id, kind, scope.owner)];
  if (kind === "run" && typeof answer.thread_id === "string")
    claims.push(scope.owners.claim(answer.thread_id, "thread", scope.owner));
  await Promise.all(claims);
}

/**
 * What the gateway does with a provider's 2xx JSON answer: records what it created, forgets what it deleted,
 * counts a finished run's usage once, and keeps only the caller's own objects (and ones never recorded) in a list
 * the whole account shares. Returns the answer to send: `changed` when a list lost items.
 */
export async function settleJsonAnswer(
  operation: AssistantsOperation,
  answer: unknown,
  scope: CallScope,
): Promise<{ answer: unknown; changed: boolean }> {
  if (!isPlainObject(answer)) return { answer, changed: false };
  if (operation.creates) await claimCreated(answer, scope);
  if (operation.deletes && answer.deleted === true && typeof answer.id === "string")
    await scope.owners.release(answer.id);
  const run = finishedRunOf(answer);
  if (run) await recordRunUsage(run, scope);
  if (operation.filtersList && answer.object === "list" && Array.isArray(answer.data)) {
    const data = answer.data as unknown[];
    const kept = await ownItems(data, scope);
    if (kept.length !== data.length) {
      // first_id / last_id / has_more stay the provider's: they are the cursor of the next page.
      return { answer: { ...answer, data: kept }, changed: true };
    }
  }
  return { answer, changed: false };
}

async function ownItems(items: unknown[], scope: CallScope): Promise<unknown[]> {
  const mine = ownerKey(scope.owner);
  const owners = await Promise.all(
    items.map((item) =>
      isPlainObject(item) && typeof item.id === "string" ? scope.owners.ownerOf(item.id) : Promise.resolve(undefined),
    ),
  );
  return items.filter((_item, i) => {
    const owner = owners[i];
    return owner === undefined || ownerKey(owner) === mine;
  });
}
