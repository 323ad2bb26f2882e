import type { ComponentChildren } from "preact";

export interface Column<T> {
  header: string;
  cell: (row: T) => ComponentChildren;
  /** Right-aligned numbers. */
  numeric?: boolean;
  /** Hidden on narrow screens (phones) to keep the table readable. */
  wide?: boolean;
}

export interface TableProps<T> {
  caption: string;
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string;
  /** Makes a row activatable by click and by Enter/Space (the row is then focusable). */
  onOpen?: (row: T) => void;
  empty?: ComponentChildren;
}

/** A data table that scrolls sideways inside its box on narrow screens. */
export function Table<T>({ caption, columns, rows, rowKey, onOpen, empty }: TableProps<T>) {
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column.header} scope="col" class={cellClass(column)}>
                {column.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={columns.length} class="table-empty">
                {empty ?? "Nothing here yet."}
              </td>
            </tr>
          ) : (
            rows.map((row) => (
              <tr
                key={rowKey(row)}
                class={onOpen ? "row-link" : undefined}
                tabIndex={onOpen ? 0 : undefined}
                onClick={onOpen ? () => onOpen(row) : undefined}
                onKeyDown={
                  onOpen
                    ? (event) => {
                        if (event.key === "Enter" || event.key === " ") {
                          event.preventDefault();
                          onOpen(row);
                        }
                      }
                    : undefined
                }
              >
                {columns.map((column) => (
                  <td key={column.header} class={cellClass(column)} data-label={column.header}>
                    {column.cell(row)}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}

const cellClass = (column: { numeric?: boolean; wide?: boolean }) =>
  [column.numeric ? "numeric" : "", column.wide ? "wide" : ""].filter(Boolean).join(" ") || undefined;
