/** SST component names are PascalCase identifiers: `admin-configs` -> `AdminConfigs`. */
export function componentName(...parts: string[]): string {
  return parts
    .flatMap((part) => part.split(/[^A-Za-z0-9]+/))
    .filter(Boolean)
    .map((word) => word[0].toUpperCase() + word.slice(1))
    .join("");
}
