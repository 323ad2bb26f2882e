import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { VectorIndex } from "../../core/store/vector-index.ts";
import { cosineSimilarity } from "../../core/inference/cache/vectors/vector-rules.ts";

/** Dimensions every adapter under test serves (the AWS adapter is given indexes for these). */
export const CONTRACT_DIMENSIONS = [4, 8, 1536] as const;

const scopeName = (name: string) => `scope:${randomUUID()}:${name}`;
const HOUR = 3_600_000;
const later = () => Date.now() + HOUR;

/** A deterministic vector with components in [-0.5, 0.5): `seed` picks its direction (mulberry32). */
export function seededVector(dimensions: number, seed: number): Float32Array {
  const vector = new Float32Array(dimensions);
  let state = seed >>> 0;
  for (let i = 0; i < dimensions; i++) {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    vector[i] = ((t ^ (t >>> 14)) >>> 0) / 4294967296 - 0.5;
  }
  return vector;
}

/** `vector` moved slightly towards another direction: similarity to the original stays above ~0.99. */
function nudged(vector: Float32Array, seed: number, amount = 0.05): Float32Array {
  const noise = seededVector(vector.length, seed);
  return vector.map((value, i) => value + amount * noise[i]!);
}

export function vectorIndexContract(getIndex: () => VectorIndex) {
  describe("VectorIndex", () => {
    it("answers undefined for a scope with no entries", async () => {
      expect(await getIndex().nearest(scopeName("empty"), seededVector(4, 1), 0.5)).toBeUndefined();
    });

    it("finds a stored vector with similarity 1, and the nearest of several with its exact cosine", async () => {
      const index = getIndex();
      const scope = scopeName("nearest");
      const vectors = [1, 2, 3, 4, 5].map((seed) => seededVector(8, seed));
      for (const [i, vector] of vectors.entries()) await index.add(scope, `entry-${i}`, vector, later());

      const exact = await index.nearest(scope, vectors[2]!, 0.95);
      expect(exact?.id).toBe("entry-2");
      expect(exact?.score).toBeCloseTo(1, 5);

      const query = nudged(vectors[3]!, 99);
      const near = await index.nearest(scope, query, 0.9);
      expect(near?.id).toBe("entry-3");
      expect(near?.score).toBeCloseTo(cosineSimilarity(query, vectors[3]!), 4);
      expect(near!.score).toBeLessThan(1);
    });

    it("is a miss below minScore, a hit at or above it", async () => {
      const index = getIndex();
      const scope = scopeName("threshold");
      const stored = seededVector(8, 7);
      await index.add(scope, "only", stored, later());
      const query = nudged(stored, 3, 0.4);
      const similarity = cosineSimilarity(query, stored);
      expect(similarity).toBeGreaterThan(0.5);
      expect(similarity).toBeLessThan(0.99);
      expect(await index.nearest(scope, query, Math.min(1, similarity + 0.01))).toBeUndefined();
      expect((await index.nearest(scope, query, similarity - 0.01))?.id).toBe("only");
    });

    it("never answers from another scope, and keeps equal ids of two scopes apart", async () => {
      const index = getIndex();
      const [first, second] = [scopeName("a"), scopeName("b")];
      const vector = seededVector(4, 11);
      await index.add(first, "shared-id", vector, later());
      expect(await index.nearest(second, vector, -1)).toBeUndefined();

      await index.add(second, "shared-id", seededVector(4, 12), later());
      await index.remove(second, "shared-id");
      expect(await index.nearest(second, vector, -1)).toBeUndefined();
      expect((await index.nearest(first, vector, 0.99))?.id).toBe("shared-id");
    });

    it("replaces an entry added again under the same id", async () => {
      const index = getIndex();
      const scope = scopeName("replace");
      const [before, after] = [seededVector(8, 21), seededVector(8, 22)];
      await index.add(scope, "entry", before, later());
      await index.add(scope, "entry", after, later());
      expect(await index.nearest(scope, before, 0.99)).toBeUndefined();
      expect((await index.nearest(scope, after, 0.99))?.id).toBe("entry");
    });

    it("removes entries; removing an absent one is not an error", async () => {
      const index = getIndex();
      const scope = scopeName("remove");
      const vector = seededVector(4, 31);
      await index.add(scope, "gone", vector, later());
      await index.add(scope, "kept", seededVector(4, 32), later());
      await index.remove(scope, "gone");
      await index.remove(scope, "never-there");
      expect((await index.nearest(scope, vector, -1))?.id).toBe("kept");
    });

    it("treats an expired entry as a miss, and finds a live one past it", async () => {
      const index = getIndex();
      const scope = scopeName("ttl");
      const vector = seededVector(8, 41);
      await index.add(scope, "short", vector, Date.now() + 150);
      await index.add(scope, "long", nudged(vector, 5, 0.2), later());
      expect((await index.nearest(scope, vector, 0.5))?.id).toBe("short");
      await sleep(250);
      expect((await index.nearest(scope, vector, 0.5))?.id).toBe("long");
      await index.remove(scope, "long");
      expect(await index.nearest(scope, vector, -1)).toBeUndefined();
      // Already expired when added: never found.
      await index.add(scope, "stale", vector, Date.now() - 1);
      expect(await index.nearest(scope, vector, -1)).toBeUndefined();
    });

    it("matches only vectors of the query's dimension: another dimension is a miss, not an error", async () => {
      const index = getIndex();
      const scope = scopeName("dimensions");
      await index.add(scope, "four", seededVector(4, 51), later());
      expect(await index.nearest(scope, seededVector(8, 51), -1)).toBeUndefined();
      await index.add(scope, "eight", seededVector(8, 52), later());
      expect((await index.nearest(scope, seededVector(8, 52), 0.99))?.id).toBe("eight");
      expect((await index.nearest(scope, seededVector(4, 51), 0.99))?.id).toBe("four");
    });

    it("serves embedding-sized vectors (1536 dimensions)", async () => {
      const index = getIndex();
      const scope = scopeName("large");
      await Promise.all(
        Array.from({ length: 20 }, (_, seed) => index.add(scope, `e${seed}`, seededVector(1536, seed), later())),
      );
      const hit = await index.nearest(scope, nudged(seededVector(1536, 13), 77, 0.1), 0.95);
      expect(hit?.id).toBe("e13");
      expect(hit!.score).toBeGreaterThan(0.99);
    });

    it("finds the right entry among a few hundred in one scope", async () => {
      const index = getIndex();
      const scope = scopeName("many");
      const entries = Array.from({ length: 300 }, (_, i) => seededVector(8, 1000 + i));
      await Promise.all(entries.map((vector, i) => index.add(scope, `m${i}`, vector, later())));
      // The newest entry is found at once. An index may bring a scope into memory newest first while it keeps
      // answering (the local one does): older entries are found within moments, a miss meanwhile is a miss.
      expect((await index.nearest(scope, entries[299]!, 0.999))?.id).toBe("m299");
      for (const i of [150, 0]) {
        await expect
          .poll(async () => (await index.nearest(scope, entries[i]!, 0.999))?.id, { timeout: 5000, interval: 20 })
          .toBe(`m${i}`);
      }
    });

    it("rejects invalid arguments with RangeError", async () => {
      const index = getIndex();
      const scope = scopeName("invalid");
      const vector = seededVector(4, 61);
      await expect(index.add("", "id", vector, later())).rejects.toThrow(RangeError);
      await expect(index.add(scope, "", vector, later())).rejects.toThrow(RangeError);
      await expect(index.add("s".repeat(257), "id", vector, later())).rejects.toThrow(RangeError);
      await expect(index.add(scope, "id", new Float32Array([1, Number.NaN, 0, 0]), later())).rejects.toThrow(
        RangeError,
      );
      await expect(index.add(scope, "id", new Float32Array(4), later())).rejects.toThrow(RangeError);
      await expect(index.add(scope, "id", new Float32Array(0), later())).rejects.toThrow(RangeError);
      await expect(index.add(scope, "id", vector, Number.NaN)).rejects.toThrow(RangeError);
      await expect(index.nearest(scope, vector, 1.5)).rejects.toThrow(RangeError);
      await expect(index.nearest(scope, new Float32Array([Number.POSITIVE_INFINITY, 0, 0, 0]), 0.5)).rejects.toThrow(
        RangeError,
      );
      await expect(index.remove("", "id")).rejects.toThrow(RangeError);
      // A query with no direction matches nothing.
      await index.add(scope, "id", vector, later());
      expect(await index.nearest(scope, new Float32Array(4), -1)).toBeUndefined();
    });
  });
}
