import { ApiError } from "../api.ts";

/** An error as the user should read it: an ApiError's message and the parameter it names. */
export function ErrorBanner({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  const param = error instanceof ApiError ? error.error.param : null;
  const code = error instanceof ApiError ? error.error.code : null;
  return (
    <div class="error-banner" role="alert">
      <strong>{message}</strong>
      {param && (
        <span class="error-param">
          {" "}
          Parameter: <code>{param}</code>
        </span>
      )}
      {code && <span class="error-code"> ({code})</span>}
    </div>
  );
}
