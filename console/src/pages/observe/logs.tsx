import type { PageProps } from "../../pages.ts";

export default function LogsPage(_props: PageProps) {
  return <h1>Logs</h1>;
}
