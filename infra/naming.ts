/** SST component names are PascalCase identifiers: `admin-configs` -> `AdminConfigs`. */
export function componentName(...parts: string[]): string {
  return parts
    .flatMap((part) => part.split(/[^A-Za-z0-9]+/))
    .filter(Boolean)
    .map((word) => word[0].toUpperCase() + word.slice(1))
    .join("");
}

/** 3..63 lowercase letters, digits and hyphens, unique per account and region: app and stage in it. */
export function vectorBucketName(app: string, stage: string): string {
  const name = `${app}-${stage}-semantic-cache`
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/-+/g, "-");
  return name.slice(0, 63).replace(/^-+|-+$/g, "");
}
