import { describe, expect, it } from "vitest";
import { calendarWindow, fixedWindow } from "../../../../core/inference/policies/windows.ts";

const at = (iso: string) => Date.parse(iso) / 1000;

describe("policy windows", () => {
  it("aligns fixed windows to the epoch", () => {
    expect(fixedWindow(Date.parse("2026-03-04T10:15:42.500Z"), 60)).toEqual({
      start: at("2026-03-04T10:15:00Z"),
      end: at("2026-03-04T10:16:00Z"),
    });
  });

  it("aligns calendar periods in UTC", () => {
    const now = Date.parse("2026-03-04T10:15:42Z"); // a Wednesday
    expect(calendarWindow(now, "daily", undefined)).toEqual({
      start: at("2026-03-04T00:00:00Z"),
      end: at("2026-03-05T00:00:00Z"),
    });
    expect(calendarWindow(now, "weekly", undefined)).toEqual({
      start: at("2026-03-02T00:00:00Z"),
      end: at("2026-03-09T00:00:00Z"),
    });
    expect(calendarWindow(now, "monthly", undefined)).toEqual({
      start: at("2026-03-01T00:00:00Z"),
      end: at("2026-04-01T00:00:00Z"),
    });
    expect(calendarWindow(Date.parse("2026-12-31T23:59:59Z"), "monthly", undefined)).toEqual({
      start: at("2026-12-01T00:00:00Z"),
      end: at("2027-01-01T00:00:00Z"),
    });
  });

  it("aligns calendar periods in a time zone, across daylight-saving changes", () => {
    // Paris switches to summer time on 2026-03-29: that day is 23 hours long.
    expect(calendarWindow(Date.parse("2026-03-29T12:00:00Z"), "daily", "Europe/Paris")).toEqual({
      start: at("2026-03-28T23:00:00Z"),
      end: at("2026-03-29T22:00:00Z"),
    });
    expect(calendarWindow(Date.parse("2026-03-31T23:30:00Z"), "monthly", "Europe/Paris")).toEqual({
      start: at("2026-03-31T22:00:00Z"),
      end: at("2026-04-30T22:00:00Z"),
    });
    expect(calendarWindow(Date.parse("2026-03-02T03:00:00Z"), "weekly", "America/New_York")).toEqual({
      start: at("2026-02-23T05:00:00Z"),
      end: at("2026-03-02T05:00:00Z"),
    });
  });
});
