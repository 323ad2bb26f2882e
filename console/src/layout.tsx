import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";
import { PAGES, type PageProps, pageFor } from "./pages.ts";
import { currentLocation, useLocation } from "./router.ts";
import { useSession } from "./session.ts";
import { Button, ErrorBanner, Field } from "./ui/index.ts";

/** The signed-in frame: skip link, header (workspace picker, sign-out), nav by group, and the current page. */
export function Layout() {
  const session = useSession();
  const location = useLocation();
  const match = pageFor(location.path);
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => {
    // Read the location now, not at render: the user (or a link) may have gone to a page since.
    if (!pageFor(currentLocation().path)) window.location.hash = PAGES[0].route;
    setMenuOpen(false);
  }, [location.path]);
  const groups = ["Observe", "Manage"] as const;
  return (
    <div class="shell">
      <button type="button" class="skip-link" onClick={skipToMain}>
        Skip to content
      </button>
      <header class="topbar">
        <button
          type="button"
          class="menu-toggle"
          aria-expanded={menuOpen ? "true" : "false"}
          aria-controls="nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <span class="brand">AI Gateway</span>
        <div class="topbar-tools">
          {session.workspaces.length > 1 && (
            <Field label="Workspace">
              {({ id }) => (
                <select
                  id={id}
                  value={session.workspaceId ?? ""}
                  onChange={(event) => session.setWorkspaceId(event.currentTarget.value || null)}
                >
                  <option value="">All workspaces</option>
                  {session.workspaces.map((workspace) => (
                    <option key={workspace.id} value={workspace.id}>
                      {workspace.name || workspace.slug || workspace.id}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          )}
          <span class="who">{session.displayName}</span>
          <Button onClick={() => session.signOut()}>Sign out</Button>
        </div>
      </header>
      <nav id="nav" class={`nav${menuOpen ? " nav-open" : ""}`} aria-label="Console">
        {groups.map((group) => {
          const pages = PAGES.filter((page) => page.group === group);
          if (pages.length === 0) return null;
          return (
            <section key={group} aria-label={group}>
              <h2 class="nav-group">{group}</h2>
              <ul>
                {pages.map((page) => (
                  <li key={page.route}>
                    <a
                      href={`#${page.route}`}
                      aria-current={match?.page === page ? "page" : undefined}
                      class={match?.page === page ? "active" : undefined}
                    >
                      {page.title}
                    </a>
                  </li>
                ))}
              </ul>
            </section>
          );
        })}
      </nav>
      <main id="main" class="content" tabIndex={-1}>
        {match ? (
          <LazyPage
            key={`${match.page.route}|${session.workspaceId ?? ""}`}
            load={match.page.load}
            title={match.page.title}
            props={{ subpath: match.subpath, query: location.query }}
          />
        ) : null}
      </main>
    </div>
  );
}

/** A button, not a `#main` link: the hash is the router's. */
function skipToMain() {
  document.getElementById("main")?.focus();
}

/** Loads a page's chunk on first visit, then renders it; sets the document title. */
function LazyPage({
  load,
  title,
  props,
}: {
  load: () => Promise<{ default: ComponentType<PageProps> }>;
  title: string;
  props: PageProps;
}) {
  const [Page, setPage] = useState<ComponentType<PageProps> | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    document.title = `${title} · AI Gateway`;
    let current = true;
    load().then(
      (module) => current && setPage(() => module.default),
      (failure) => current && setError(failure),
    );
    return () => {
      current = false;
    };
  }, [load, title]);
  if (error) return <ErrorBanner error={error} />;
  if (!Page) return <p aria-busy="true">Loading…</p>;
  return <Page {...props} />;
}
