import type { PageProps } from "../../pages.ts";

export default function AnalyticsPage(_props: PageProps) {
  return <h1>Analytics</h1>;
}
