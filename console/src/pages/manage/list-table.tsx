import type { ComponentChildren } from "preact";
import { Button, Table, type TableProps } from "../../ui/index.ts";
import { Problem } from "./problem.tsx";
import type { ListState } from "./use-list.ts";

interface ListTableProps<T> extends Omit<TableProps<T>, "empty"> {
  /** The list the rows come from (they may be its items as they are, or reshaped by the page). */
  list: Pick<ListState<unknown>, "error" | "loading" | "hasMore" | "loadMore">;
  /** What an empty, loaded list says. */
  empty: ComponentChildren;
}

/** A Manage page's list: its failure (403s said plainly), the table, and "Load more" while pages remain. */
export function ListTable<T>({ list, empty, ...table }: ListTableProps<T>) {
  return (
    <>
      <Problem error={list.error} />
      <Table {...table} empty={list.loading ? "Loading…" : empty} />
      {list.hasMore && <Button onClick={list.loadMore}>Load more</Button>}
    </>
  );
}
