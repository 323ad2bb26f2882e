import { ApiError } from "../../api.ts";
import { ErrorBanner } from "../../ui/index.ts";

/**
 * An API failure as the Manage pages show it: a 403 says plainly that the signed-in principal may not do this
 * (with the gateway's message naming the missing scope or reach), anything else is the gateway's error as is.
 */
export function Problem({ error }: { error: unknown }) {
  if (!error) return null;
  if (error instanceof ApiError && error.status === 403) {
    return (
      <div class="error-banner problem-forbidden" role="alert">
        <strong>Not allowed (403):</strong> {error.message}
        {error.error.code && <span class="error-code"> ({error.error.code})</span>}
        <p class="problem-hint">Your sign-in lacks the rights for this. Ask an admin for a key with this scope.</p>
      </div>
    );
  }
  return <ErrorBanner error={error} />;
}

/** The `param` an API error names, if any (where a form shows it beside the field). */
export const errorParam = (error: unknown): string | null => (error instanceof ApiError ? error.error.param : null);
