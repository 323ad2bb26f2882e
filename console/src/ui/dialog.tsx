import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";
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
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} class="dialog" aria-labelledby="dialog-title" onClose={onClose} onCancel={onClose}>
      <header class="dialog-header">
        <h2 id="dialog-title">{title}</h2>
      </header>
      <div class="dialog-body">{children}</div>
      <footer class="dialog-actions">
        {actions}
        <Button onClick={onClose}>Close</Button>
      </footer>
    </dialog>
  );
}
