import type { ComponentChildren, JSX } from "preact";

type ButtonProps = Omit<JSX.ButtonHTMLAttributes<HTMLButtonElement>, "type"> & {
  variant?: "primary" | "secondary" | "danger";
  type?: "button" | "submit";
  busy?: boolean;
  children: ComponentChildren;
};

/** A button (type "button" unless said otherwise, so it never submits a form by accident). */
export function Button({ variant = "secondary", type = "button", busy, disabled, children, ...rest }: ButtonProps) {
  return (
    <button
      {...rest}
      type={type}
      class={`button button-${variant}${rest.class ? ` ${rest.class}` : ""}`}
      disabled={disabled || busy}
      aria-busy={busy ? "true" : undefined}
    >
      {children}
    </button>
  );
}
