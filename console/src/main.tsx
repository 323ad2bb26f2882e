import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiError, type Credentials, api, currentCredentials, onSignedOut, saveCredentials } from "./api.ts";
import { Layout } from "./layout.tsx";
import { SessionContext, type SessionInfo } from "./session.ts";
import { SignIn } from "./sign-in.tsx";
import "./styles.css";

interface SelfAnswer {
  email: string | null;
  display_name: string | null;
  workspace_id: string | null;
  auth_method: string;
  csrf_token?: string;
}

interface WorkspaceRow {
  id: string;
  slug?: string;
  name?: string;
}

const WORKSPACE_STORAGE = "gateway.console.workspace";

/** Signs in (an API key in this tab, or an SSO session cookie the gateway set), then shows the layout. */
function App() {
  const [credentials, setCredentials] = useState<Credentials | null>(currentCredentials);
  const [checkedSession, setCheckedSession] = useState(credentials !== null);
  const [displayName, setDisplayName] = useState("API key");
  const [workspaces, setWorkspaces] = useState<WorkspaceRow[]>([]);
  const [workspaceId, setWorkspaceIdState] = useState<string | null>(() => sessionStorage.getItem(WORKSPACE_STORAGE));

  useEffect(() => onSignedOut(() => setCredentials(null)), []);

  // Back from the identity provider (or a reload): a session cookie may already be there.
  useEffect(() => {
    if (credentials?.kind === "api_key") return;
    api<SelfAnswer>("/v1/auth/self")
      .then(
        (self) => {
          if (self.auth_method !== "session") return;
          const next: Credentials = { kind: "session", csrfToken: self.csrf_token };
          saveCredentials(next);
          setCredentials(next);
          setDisplayName(self.display_name ?? self.email ?? "Signed in");
        },
        () => {
          if (credentials?.kind === "session") {
            saveCredentials(null);
            setCredentials(null);
          }
        },
      )
      .finally(() => setCheckedSession(true));
  }, [credentials?.kind]);

  useEffect(() => {
    if (!credentials) return;
    if (credentials.kind === "api_key") setDisplayName("API key");
    // Organisation-level principals list several workspaces; a workspace key gets 403 and no picker.
    api<{ data: WorkspaceRow[] }>("/v1/admin/workspaces", { query: { limit: 100 } }).then(
      (page) => setWorkspaces(page.data),
      () => setWorkspaces([]),
    );
  }, [credentials]);

  if (!credentials) {
    if (!checkedSession) return <p aria-busy="true">Loading…</p>;
    return <SignIn onSignedIn={setCredentials} />;
  }

  const session: SessionInfo = {
    credentials,
    displayName,
    workspaces,
    workspaceId,
    setWorkspaceId(id) {
      if (id) sessionStorage.setItem(WORKSPACE_STORAGE, id);
      else sessionStorage.removeItem(WORKSPACE_STORAGE);
      setWorkspaceIdState(id);
    },
    async signOut() {
      if (credentials.kind === "session") {
        await api("/v1/auth/logout", { method: "POST" }).catch((error) => {
          if (!(error instanceof ApiError)) throw error;
        });
      }
      saveCredentials(null);
      sessionStorage.removeItem(WORKSPACE_STORAGE);
      setCredentials(null);
      window.location.hash = "";
    },
  };
  return (
    <SessionContext.Provider value={session}>
      <Layout />
    </SessionContext.Provider>
  );
}

render(<App />, document.getElementById("app")!);
