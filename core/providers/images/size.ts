/**
 * OpenAI's image `size` (`WIDTHxHEIGHT` or `auto`) in the terms other providers size images by: the nearest of
 * their aspect ratios (Stability, Imagen) or of their supported width x height pairs (Titan, Nova Canvas).
 * "Nearest" compares aspect ratios on a log scale, so 1792x1024 and 1024x1792 land on 16:9 and 9:16.
 */

export interface Dimensions {
  width: number;
  height: number;
}

/** `1024x1536` -> {width, height}; undefined for `auto`, absent or malformed sizes (the provider's default). */
export function parseSize(size: unknown): Dimensions | undefined {
  if (typeof size !== "string") return undefined;
  const match = /^(\d{2,5})x(\d{2,5})$/.exec(size);
  if (!match) return undefined;
  return { width: Number(match[1]), height: Number(match[2]) };
}

function ratioOf(text: string): number {
  const [w, h] = text.split(":").map(Number);
  return w! / h!;
}

/** The allowed `W:H` ratio closest to the size's shape, or undefined when the size says nothing. */
export function nearestAspectRatio(size: unknown, allowed: readonly string[]): string | undefined {
  const dimensions = parseSize(size);
  if (!dimensions) return undefined;
  const wanted = Math.log(dimensions.width / dimensions.height);
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of allowed) {
    const distance = Math.abs(Math.log(ratioOf(candidate)) - wanted);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/**
 * The supported pair closest in shape to the size, and among equal shapes the one closest in area: an exact
 * match wins. Undefined when the size says nothing.
 */
export function nearestDimensions(size: unknown, supported: readonly Dimensions[]): Dimensions | undefined {
  const dimensions = parseSize(size);
  if (!dimensions) return undefined;
  const shape = Math.log(dimensions.width / dimensions.height);
  const area = Math.log(dimensions.width * dimensions.height);
  let best: Dimensions | undefined;
  let bestScore = Number.POSITIVE_INFINITY;
  for (const candidate of supported) {
    // Shape first (a square never becomes a banner), then area.
    const score =
      Math.abs(Math.log(candidate.width / candidate.height) - shape) * 100 +
      Math.abs(Math.log(candidate.width * candidate.height) - area);
    if (score < bestScore) {
      best = candidate;
      bestScore = score;
    }
  }
  return best;
}
