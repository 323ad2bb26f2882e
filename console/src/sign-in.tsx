import { useEffect, useState } from "preact/hooks";
import { ApiError, type Credentials, api, saveCredentials } from "./api.ts";
import { Button, ErrorBanner, Field } from "./ui/index.ts";

export const SSO_LOGIN_PATH = "/v1/auth/sso/login";

/**
 * Sign in with an API key (checked with one call, kept in sessionStorage for this tab) or, when the
 * organisation has single sign-on, through its identity provider (the gateway sets the session cookie).
 */
export function SignIn({ onSignedIn }: { onSignedIn: (credentials: Credentials) => void }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const ssoAvailable = useSsoAvailable();

  async function submit(event: Event) {
    event.preventDefault();
    const trimmed = key.trim();
    if (!trimmed) {
      setError(new Error("Enter an API key."));
      return;
    }
    setBusy(true);
    setError(null);
    const credentials: Credentials = { kind: "api_key", key: trimmed };
    saveCredentials(credentials);
    try {
      await checkKey();
      onSignedIn(credentials);
    } catch (failure) {
      saveCredentials(null);
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="sign-in" id="main">
      <h1>AI Gateway console</h1>
      <form onSubmit={submit} class="card" aria-label="Sign in with an API key">
        <Field label="API key" hint="Kept in this browser tab only; closing the tab signs you out.">
          {({ id, describedBy }) => (
            <input
              id={id}
              name="api-key"
              type="password"
              autocomplete="off"
              spellcheck={false}
              aria-describedby={describedBy}
              value={key}
              onInput={(event) => setKey(event.currentTarget.value)}
            />
          )}
        </Field>
        <ErrorBanner error={error} />
        <Button type="submit" variant="primary" busy={busy}>
          Sign in
        </Button>
      </form>
      {ssoAvailable && (
        <p class="card">
          <a class="button button-secondary" href={`${SSO_LOGIN_PATH}?redirect=${encodeURIComponent("/")}`}>
            Sign in with SSO
          </a>
        </p>
      )}
    </main>
  );
}

/**
 * A key is good if the gateway accepts it: any answer but 401 (a key without the logs scope gets 403 here yet
 * may manage other things).
 */
async function checkKey(): Promise<void> {
  try {
    await api("/v1/logs", { query: { limit: 1 } });
  } catch (error) {
    if (error instanceof ApiError && error.status !== 401) return;
    throw error;
  }
}

/** Whether the deployment's organisation has SSO: its login route redirects (302) instead of answering 404. */
function useSsoAvailable(): boolean {
  const [available, setAvailable] = useState(false);
  useEffect(() => {
    fetch(`${SSO_LOGIN_PATH}?redirect=${encodeURIComponent("/")}`, { redirect: "manual", credentials: "omit" })
      .then((response) => setAvailable(response.type === "opaqueredirect" || response.status === 302))
      .catch(() => setAvailable(false));
  }, []);
  return available;
}
