import { describe, expect, it } from "vitest";
import { nearestAspectRatio, nearestDimensions, parseSize } from "../../../core/providers/images/size.ts";

describe("image size mapping", () => {
  it("reads WIDTHxHEIGHT and leaves auto to the provider", () => {
    expect(parseSize("1024x1536")).toEqual({ width: 1024, height: 1536 });
    expect(parseSize("auto")).toBeUndefined();
    expect(parseSize(undefined)).toBeUndefined();
  });

  it("picks the nearest aspect ratio", () => {
    const ratios = ["1:1", "9:16", "16:9", "3:4", "4:3"];
    expect(nearestAspectRatio("1024x1024", ratios)).toBe("1:1");
    expect(nearestAspectRatio("1792x1024", ratios)).toBe("16:9");
    expect(nearestAspectRatio("1024x1792", ratios)).toBe("9:16");
    expect(nearestAspectRatio("1024x1536", ratios)).toBe("3:4");
    expect(nearestAspectRatio("auto", ratios)).toBeUndefined();
  });

  it("picks the supported pair of the same shape and nearest area", () => {
    const supported = [
      { width: 512, height: 512 },
      { width: 1024, height: 1024 },
      { width: 1408, height: 768 },
      { width: 768, height: 1408 },
    ];
    expect(nearestDimensions("1024x1024", supported)).toEqual({ width: 1024, height: 1024 });
    expect(nearestDimensions("256x256", supported)).toEqual({ width: 512, height: 512 });
    expect(nearestDimensions("1792x1024", supported)).toEqual({ width: 1408, height: 768 });
    expect(nearestDimensions("1024x1792", supported)).toEqual({ width: 768, height: 1408 });
  });
});
