export { Button } from "./button.tsx";
export { Dialog } from "./dialog.tsx";
export { ErrorBanner } from "./error-banner.tsx";
export { Field } from "./field.tsx";
export { type Column, Table, type TableProps } from "./table.tsx";
export { type AsyncState, useAsync } from "./use-async.ts";
