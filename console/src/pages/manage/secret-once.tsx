import { useId, useState } from "preact/hooks";
import { Button, Dialog } from "../../ui/index.ts";

interface SecretOnceProps {
  title: string;
  /** The secret; null closes the dialog (and forgets it). */
  secret: string | null;
  label: string;
  note?: string;
  onClose: () => void;
}

/**
 * A secret the API answers once (a new or rotated API key, an invite link): shown in a read-only field with a
 * copy button, and forgotten when the dialog closes (the page keeps no copy).
 */
export function SecretOnce({ title, secret, label, note, onClose }: SecretOnceProps) {
  const id = useId();
  const [copied, setCopied] = useState<"" | "copied" | "failed">("");
  const close = () => {
    setCopied("");
    onClose();
  };
  const copy = async () => {
    if (!secret) return;
    try {
      await navigator.clipboard.writeText(secret);
      setCopied("copied");
    } catch {
      // Clipboard refused (insecure origin, permissions): select the text so the user can copy it by hand.
      const input = document.getElementById(id) as HTMLInputElement | null;
      input?.select();
      setCopied("failed");
    }
  };
  return (
    <Dialog
      title={title}
      open={secret !== null}
      onClose={close}
      actions={
        <Button variant="primary" onClick={copy}>
          Copy
        </Button>
      }
    >
      <p class="secret-note">
        <strong>This is the only time it is shown.</strong> {note ?? "Store it somewhere safe now."}
      </p>
      <div class="field">
        <label for={id}>{label}</label>
        <input
          id={id}
          class="secret-value"
          readOnly
          value={secret ?? ""}
          data-testid="secret-value"
          onFocus={(event) => event.currentTarget.select()}
        />
      </div>
      <p class="secret-copied" aria-live="polite">
        {copied === "copied"
          ? "Copied to the clipboard."
          : copied === "failed"
            ? "Copy it by hand: it is selected."
            : ""}
      </p>
    </Dialog>
  );
}
