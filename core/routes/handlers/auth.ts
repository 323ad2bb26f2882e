import { findUser } from "../../control/directory.ts";
import type { HandlerMap } from "../../http/context.ts";
import { forbidden } from "../../http/errors.ts";
import { json } from "../../http/json.ts";
import { SESSION_COOKIE, csrfTokenOf, readCookie } from "../../identity/sso/sessions.ts";

/**
 * `GET /v1/auth/self` (spec 4.8): the identity behind a JWT or an SSO session; API-key-only calls are rejected.
 * `display_name` (spec 5.5) is the user's name, else their email. A session also gets its CSRF token, which
 * state-changing calls echo in `x-gateway-csrf`.
 */
export const handlers: HandlerMap = {
  async self(request, ctx) {
    const principal = ctx.principal!;
    if (principal.kind !== "jwt" && principal.kind !== "session") {
      throw forbidden(
        "GET /auth/self needs a JWT (Authorization: Bearer <jwt>) or a session; API keys are not accepted.",
        "jwt_required",
      );
    }
    const user = principal.userId
      ? await findUser(ctx.services.stores.records, principal.organisationId, principal.userId)
      : undefined;
    const sessionId =
      principal.kind === "session" ? readCookie(request.headers.get("cookie"), SESSION_COOKIE) : undefined;
    return json({
      object: "user",
      id: principal.userId ?? null,
      email: principal.userEmail ?? null,
      display_name: user?.name || principal.userEmail || null,
      organisation_id: principal.organisationId,
      workspace_id: principal.workspaceId ?? null,
      role: principal.organisationRole ?? null,
      workspace_role: principal.workspaceRole ?? null,
      scopes: principal.scopes,
      auth_method: principal.kind,
      ...(sessionId ? { csrf_token: csrfTokenOf(sessionId) } : {}),
    });
  },
};
