import { useEffect, useState } from "preact/hooks";

/**
 * Hash routing (`#/logs/req_123?status=500`): the same static files work from the local gateway and from a
 * bucket, which knows nothing of client-side paths. A location is a path (`/logs/req_123`) and a query.
 */
export interface Location {
  path: string;
  query: URLSearchParams;
}

export function currentLocation(): Location {
  const hash = window.location.hash.replace(/^#/, "") || "/";
  const [path, search = ""] = hash.split("?", 2);
  return { path: path.startsWith("/") ? path : `/${path}`, query: new URLSearchParams(search) };
}

export function useLocation(): Location {
  const [location, setLocation] = useState(currentLocation);
  useEffect(() => {
    const update = () => setLocation(currentLocation());
    window.addEventListener("hashchange", update);
    // The hash may have changed between the first render and this effect (effects run after paint).
    update();
    return () => window.removeEventListener("hashchange", update);
  }, []);
  return location;
}

/** Builds `#/path?query` (empty query values left out). */
export function href(path: string, query: Record<string, string | number | undefined | null> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== "") params.set(name, String(value));
  }
  const search = params.toString();
  return `#${path}${search ? `?${search}` : ""}`;
}

export function navigate(path: string, query: Record<string, string | number | undefined | null> = {}): void {
  window.location.hash = href(path, query).slice(1);
}

/** Replaces the query of the current route without adding a history entry (filters, paging). */
export function replaceQuery(query: Record<string, string | number | undefined | null>): void {
  const target = href(currentLocation().path, query);
  if (target !== window.location.hash) {
    history.replaceState(null, "", target);
    window.dispatchEvent(new HashChangeEvent("hashchange"));
  }
}
