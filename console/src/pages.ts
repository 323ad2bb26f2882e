/**
 * THE page registry: every console page, its hash route, title, nav group and lazily loaded component.
 *
 * HOW TO ADD A PAGE (part B, Manage pages):
 *   1. One file per page: console/src/pages/manage/<name>.tsx with a default export
 *      `export default function KeysPage(props: PageProps) { ... }`.
 *   2. One line in PAGES below: `{ route: "/keys", title: "API keys", group: "Manage", load: () => import("./pages/manage/keys.tsx") }`.
 *      Routes start with `/`; the page also receives every sub-path (`#/keys/key_123` -> props.subpath "key_123")
 *      and the query string (props.query) so a detail view or a filter is a link.
 *   3. Call the API only through `api<T>(path, init)` from ./api.ts (it adds the principal's credentials and
 *      throws ApiError carrying the OpenAI error object); show failures with <ErrorBanner error={...} />.
 *      List pages pass `workspace_id: session.workspaceId ?? undefined` (useSession() from ./session.ts)
 *      when the route accepts it.
 *   4. Shared UI in ./ui/: Table, Field (label + control + error), Button, Dialog, ErrorBanner, plus
 *      useAsync(). Every control needs a label (Field gives one); keep pages usable at 390 px wide.
 *   5. Browser tests: test/browser/<name>.test.ts with test/browser/harness.ts.
 */
import type { ComponentType } from "preact";

export interface PageProps {
  /** The route's remainder after its own path: "" on `#/logs`, "req_1" on `#/logs/req_1`. */
  subpath: string;
  query: URLSearchParams;
}

export interface PageDef {
  route: string;
  title: string;
  group: "Observe" | "Manage";
  load: () => Promise<{ default: ComponentType<PageProps> }>;
}

export const PAGES: PageDef[] = [
  { route: "/logs", title: "Logs", group: "Observe", load: () => import("./pages/observe/logs.tsx") },
  { route: "/analytics", title: "Analytics", group: "Observe", load: () => import("./pages/observe/analytics.tsx") },
  // Manage pages (part B): one line each, in the order the nav shows them.
  { route: "/keys", title: "API keys", group: "Manage", load: () => import("./pages/manage/keys.tsx") },
  { route: "/configs", title: "Configs", group: "Manage", load: () => import("./pages/manage/configs.tsx") },
  { route: "/workspaces", title: "Workspaces", group: "Manage", load: () => import("./pages/manage/workspaces.tsx") },
  { route: "/users", title: "Users", group: "Manage", load: () => import("./pages/manage/users.tsx") },
  {
    route: "/integrations",
    title: "Integrations",
    group: "Manage",
    load: () => import("./pages/manage/integrations.tsx"),
  },
  {
    route: "/virtual-keys",
    title: "Virtual keys",
    group: "Manage",
    load: () => import("./pages/manage/virtual-keys.tsx"),
  },
  { route: "/policies", title: "Policies", group: "Manage", load: () => import("./pages/manage/policies.tsx") },
  { route: "/guardrails", title: "Guardrails", group: "Manage", load: () => import("./pages/manage/guardrails.tsx") },
  { route: "/prompts", title: "Prompts", group: "Manage", load: () => import("./pages/manage/prompts.tsx") },
  { route: "/audit-logs", title: "Audit logs", group: "Manage", load: () => import("./pages/manage/audit-logs.tsx") },
];

/** The page owning `path` (its route or a sub-path of it), with the remainder. */
export function pageFor(path: string): { page: PageDef; subpath: string } | undefined {
  for (const page of PAGES) {
    if (path === page.route) return { page, subpath: "" };
    if (path.startsWith(`${page.route}/`)) return { page, subpath: path.slice(page.route.length + 1) };
  }
  return undefined;
}
