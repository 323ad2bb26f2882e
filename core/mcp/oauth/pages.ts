/**
 * The few server-rendered pages of the OAuth flows: plain HTML, every value escaped, no script at all, and a
 * strict CSP (nothing loads; forms post only to the gateway, and the consent form's redirect only to the client's
 * registered origin; no framing, against clickjacking).
 */

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
export const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (char) => ESCAPES[char]!);

function page(title: string, body: string, status = 200, formTargets: string[] = []): Response {
  const csp = [
    "default-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    `form-action 'self'${formTargets.map((origin) => ` ${origin}`).join("")}`,
  ].join("; ");
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>
`;
  return new Response(html, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": csp,
      "x-frame-options": "DENY",
      "x-content-type-options": "nosniff",
      // Not no-referrer: with it a browser sends `Origin: null` on the pages' own form posts, which the
      // same-origin check (page-forms.ts) needs to see. same-origin still tells no other site anything.
      "referrer-policy": "same-origin",
      "cache-control": "no-store",
    },
  });
}

const hidden = (name: string, value: string) =>
  `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`;

export const errorPage = (message: string, status = 400) =>
  page("Authorization failed", `<p>${escapeHtml(message)}</p>`, status);

export const donePage = (title: string, message: string) => page(title, `<p>${escapeHtml(message)}</p>`);

export interface SignInPage {
  requestId: string;
  csrf: string;
  clientName: string;
  resourceName?: string;
  /** The SSO login URL (a relative path), when the organisation has SSO. */
  ssoUrl?: string;
  error?: string;
}

export function signInPage(view: SignInPage, status = 200): Response {
  const what = view.resourceName ? ` to MCP server “${view.resourceName}”` : "";
  const body = [
    `<p>${escapeHtml(view.clientName)} asks for access${escapeHtml(what)}. Sign in to continue.</p>`,
    view.error ? `<p role="alert"><strong>${escapeHtml(view.error)}</strong></p>` : "",
    view.ssoUrl ? `<p><a href="${escapeHtml(view.ssoUrl)}">Sign in with single sign-on</a></p>` : "",
    `<form method="post" action="/oauth/authorize/sign-in">`,
    hidden("request_id", view.requestId),
    hidden("csrf", view.csrf),
    `<label>Gateway API key <input type="password" name="api_key" autocomplete="off" required></label>`,
    `<button type="submit">Sign in with an API key</button>`,
    `</form>`,
  ].join("\n");
  return page("Sign in", body, status);
}

export interface ConsentPage {
  requestId: string;
  csrf: string;
  clientName: string;
  redirectUri: string;
  subjectLabel: string;
  resourceName?: string;
  scope: string;
}

export function consentPage(view: ConsentPage): Response {
  const redirect = new URL(view.redirectUri);
  const body = [
    `<p>Signed in as ${escapeHtml(view.subjectLabel)}.</p>`,
    `<p><strong>${escapeHtml(view.clientName)}</strong> asks to use ${
      view.resourceName ? `MCP server “${escapeHtml(view.resourceName)}”` : "this gateway's MCP servers"
    } on your behalf (scope: ${escapeHtml(view.scope)}).</p>`,
    `<p>It will be sent back to ${escapeHtml(redirect.origin + redirect.pathname)}.</p>`,
    `<form method="post" action="/oauth/authorize/consent">`,
    hidden("request_id", view.requestId),
    hidden("csrf", view.csrf),
    `<button type="submit" name="decision" value="approve">Allow</button>`,
    `<button type="submit" name="decision" value="deny">Deny</button>`,
    `</form>`,
  ].join("\n");
  return page("Allow access?", body, 200, [redirect.origin]);
}
