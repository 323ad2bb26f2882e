import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { Button, Dialog } from "../../ui/index.ts";
import { Problem } from "./problem.tsx";

interface ConfirmDialogProps {
  title: string;
  /** What happens, in words (shown in the dialog). */
  children: ComponentChildren;
  confirmLabel: string;
  /** Null: closed. */
  open: boolean;
  onClose: () => void;
  /** The action; a failure stays in the dialog (a 403 as "not allowed"). */
  onConfirm: () => Promise<void>;
  danger?: boolean;
}

/** Asks before a change that cannot be undone (revoke, delete) and shows why it failed if it did. */
export function ConfirmDialog({ title, children, confirmLabel, open, onClose, onConfirm, danger }: ConfirmDialogProps) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const close = () => {
    setError(undefined);
    onClose();
  };
  return (
    <Dialog
      title={title}
      open={open}
      onClose={close}
      actions={
        <Button
          variant={danger ? "danger" : "primary"}
          busy={busy}
          onClick={async () => {
            setBusy(true);
            setError(undefined);
            try {
              await onConfirm();
              close();
            } catch (failure) {
              setError(failure);
            } finally {
              setBusy(false);
            }
          }}
        >
          {confirmLabel}
        </Button>
      }
    >
      {children}
      <Problem error={error} />
    </Dialog>
  );
}
