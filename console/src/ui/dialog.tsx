import type { ComponentChildren } from "preact";
import { useEffect, useId, useRef } from "preact/hooks";
import { Button } from "./button.tsx";

interface DialogProps {
  title: string;
  open: boolean;
  onClose: () => void;
  children: ComponentChildren;
  /** Buttons at the bottom (a Close button is always there). */
  actions?: ComponentChildren;
}

/** A modal <dialog>: the browser traps focus, Escape closes it, focus returns to the opener. */
export function Dialog({ title, open, onClose, children, actions }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  // Unique per dialog: a page holds several, and each must be named by its own title.
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} class="dialog" aria-labelledby={titleId} onClose={onClose} onCancel={onClose}>
      <header class="dialog-header">
        <h2 id={titleId}>{title}</h2>
      </header>
      <div class="dialog-body">{children}</div>
      <footer class="dialog-actions">
        {actions}
        <Button onClick={onClose}>Close</Button>
      </footer>
    </dialog>
  );
}
