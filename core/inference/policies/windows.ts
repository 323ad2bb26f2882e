/**
 * Counting windows of policies, in Unix seconds: fixed windows aligned to the epoch (rate limits), and
 * calendar periods (usage limits' `periodic_reset`: day, ISO week from Monday, month) in UTC or an IANA time
 * zone. `end` is undefined for a window that never ends (`periodic_reset: none`, start 0).
 */
export interface Window {
  start: number;
  end: number | undefined;
}

export function fixedWindow(nowMs: number, seconds: number): Window {
  const now = Math.floor(nowMs / 1000);
  const start = now - (now % seconds);
  return { start, end: start + seconds };
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** How far the zone's wall clock is ahead of UTC at `ms`, in ms. */
function offsetMs(ms: number, timezone: string): number {
  let format = formatters.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-US", {
      timeZone: timezone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timezone, format);
  }
  const parts: Record<string, number> = {};
  for (const part of format.formatToParts(new Date(ms))) parts[part.type] = Number(part.value);
  const wall = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour! % 24, parts.minute!, parts.second!);
  return wall - (ms - (((ms % 1000) + 1000) % 1000));
}

/** The UTC instant of local midnight of (year, month0, day) in the zone; overflowing days and months roll over. */
function zonedMidnight(year: number, month0: number, day: number, timezone: string | undefined): number {
  const wall = Date.UTC(year, month0, day);
  if (!timezone) return wall;
  const first = wall - offsetMs(wall, timezone);
  return wall - offsetMs(first, timezone);
}

export function calendarWindow(
  nowMs: number,
  period: "daily" | "weekly" | "monthly",
  timezone: string | undefined,
): Window {
  const local = new Date(timezone ? nowMs + offsetMs(nowMs, timezone) : nowMs);
  const year = local.getUTCFullYear();
  const month = local.getUTCMonth();
  const day = local.getUTCDate();
  let startMs: number;
  let endMs: number;
  if (period === "daily") {
    startMs = zonedMidnight(year, month, day, timezone);
    endMs = zonedMidnight(year, month, day + 1, timezone);
  } else if (period === "weekly") {
    const sinceMonday = (local.getUTCDay() + 6) % 7;
    startMs = zonedMidnight(year, month, day - sinceMonday, timezone);
    endMs = zonedMidnight(year, month, day - sinceMonday + 7, timezone);
  } else {
    startMs = zonedMidnight(year, month, 1, timezone);
    endMs = zonedMidnight(year, month + 1, 1, timezone);
  }
  return { start: Math.floor(startMs / 1000), end: Math.floor(endMs / 1000) };
}
