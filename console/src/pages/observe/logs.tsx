import type { PageProps } from "../../pages.ts";
import { LogDetail } from "./log-detail.tsx";
import { LogList } from "./log-list.tsx";
import { TraceView } from "./trace-view.tsx";

/** `#/logs` the list, `#/logs/<log id>` one request, `#/logs/trace/<trace id>` one trace. */
export default function LogsPage({ subpath, query }: PageProps) {
  if (subpath.startsWith("trace/")) return <TraceView traceId={decodeURIComponent(subpath.slice("trace/".length))} />;
  if (subpath) return <LogDetail id={decodeURIComponent(subpath)} />;
  return <LogList query={query} />;
}
