import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { Credentials } from "./api.ts";

/** What the console knows about the signed-in principal (from `GET /v1/auth/self` for sessions). */
export interface SessionInfo {
  credentials: Credentials;
  /** A display name: the user's for sessions, "API key" otherwise. */
  displayName: string;
  /** Workspaces the principal can pick from (empty when it cannot list them: a workspace key). */
  workspaces: Array<{ id: string; slug?: string; name?: string }>;
  /** The picked workspace id, passed as `workspace_id` by pages that list per workspace; null: all it reaches. */
  workspaceId: string | null;
  setWorkspaceId(id: string | null): void;
  signOut(): Promise<void>;
}

export const SessionContext = createContext<SessionInfo | null>(null);

export function useSession(): SessionInfo {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside a signed-in layout");
  return session;
}
