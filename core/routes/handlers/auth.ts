import type { HandlerMap } from "../../http/context.ts";
import { forbidden } from "../../http/errors.ts";
import { json } from "../../http/json.ts";

/** `GET /v1/auth/self` (spec 4.8): the identity behind a JWT (or session); API-key-only calls are rejected. */
export const handlers: HandlerMap = {
  async self(_request, ctx) {
    const principal = ctx.principal!;
    if (principal.kind !== "jwt") {
      throw forbidden(
        "GET /auth/self needs a JWT (Authorization: Bearer <jwt>) or a session; API keys are not accepted.",
        "jwt_required",
      );
    }
    return json({
      object: "user",
      id: principal.userId ?? null,
      email: principal.userEmail ?? null,
      organisation_id: principal.organisationId,
      workspace_id: principal.workspaceId ?? null,
      role: principal.organisationRole ?? null,
      workspace_role: principal.workspaceRole ?? null,
      scopes: principal.scopes,
    });
  },
};
