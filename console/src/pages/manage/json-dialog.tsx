import { useEffect, useState } from "preact/hooks";
import { Button, Dialog } from "../../ui/index.ts";
import { JsonEditor, parseJsonObject } from "./json-editor.tsx";
import { Problem } from "./problem.tsx";
import { useAction } from "./use-action.ts";

interface JsonDialogProps {
  title: string;
  /** The document to start from; null closes the dialog. */
  initial: string | null;
  label: string;
  hint?: string;
  /** Sends the parsed body; a failure's message and `param` path show beside the editor. */
  onSave: (body: Record<string, unknown>) => Promise<unknown>;
  onClose: () => void;
}

/** Creates or edits a resource whose body is best written as JSON (guardrails, policies). */
export function JsonDialog({ title, initial, label, hint, onSave, onClose }: JsonDialogProps) {
  const [text, setText] = useState(initial ?? "");
  const action = useAction();
  const [localError, setLocalError] = useState<unknown>(undefined);
  useEffect(() => {
    setText(initial ?? "");
    setLocalError(undefined);
    action.clear();
  }, [initial]);
  const submit = async (event: Event) => {
    event.preventDefault();
    setLocalError(undefined);
    let body: Record<string, unknown>;
    try {
      body = parseJsonObject(text);
    } catch (failure) {
      setLocalError(failure);
      return;
    }
    if (await action.run(() => onSave(body))) onClose();
  };
  const error = localError ?? action.error;
  return (
    <Dialog title={title} open={initial !== null} onClose={onClose}>
      <form class="form" onSubmit={submit}>
        <JsonEditor label={label} value={text} onInput={setText} error={error} hint={hint} rows={16} />
        {error && (error as { status?: number }).status === 403 ? <Problem error={error} /> : null}
        <div class="form-actions">
          <Button variant="primary" type="submit" busy={action.busy}>
            Save
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
