import { badRequest } from "./errors.ts";

/**
 * The `portkey-ai` SDK sends some path ids again in the body, its top-level keys made snake_case on the way
 * (`workspaceId` -> `workspace_id`, `feedbackID` -> `feedback_id`): `workspace_id` (admin.workspaces.users.create),
 * `user_id` (admin.workspaces.users.update), `export_id` (logs.exports.update), `feedback_id` (feedback.update).
 * Such a field is an echo of the path, not a change: it must name what the path names (else 400 naming the
 * field), and is then taken out of the body before the route's strict schema reads it. `echoes` maps each body
 * field to the value it must equal.
 */
export function withoutPathEchoes(body: unknown, echoes: Record<string, string | undefined>): unknown {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return body;
  let rest: Record<string, unknown> | undefined;
  for (const [field, expected] of Object.entries(echoes)) {
    if (!(field in body)) continue;
    const sent = (body as Record<string, unknown>)[field];
    if (sent !== undefined && sent !== null && sent !== expected) {
      throw badRequest(
        `The body's ${field} is ${JSON.stringify(sent).slice(0, 200)}, but this request is about ${JSON.stringify(expected)}.`,
        field,
        "id_mismatch",
      );
    }
    rest ??= { ...(body as Record<string, unknown>) };
    delete rest[field];
  }
  return rest ?? body;
}
