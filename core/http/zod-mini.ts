import * as z from "zod/mini";
import { en } from "zod/locales";

/**
 * English error messages for `zod/mini` schemas. Classic `zod` registers its English locale when it builds its
 * first schema; `zod/mini` registers none (its messages would all be "Invalid input"). The data-plane request
 * schemas use `zod/mini` (a third of classic zod's bundle and import time, spec 8's cold-start target), so each
 * of their modules imports this one (for this side effect, and the shared `int`). The locale is global zod
 * config, shared with classic zod: set only when none is, as classic zod does, so an explicit `z.config(...)`
 * elsewhere wins. (`en` is imported by name: `z.locales.en` would bundle all of zod's 60-odd locales.)
 */
if (!z.config().localeError) z.config(en());

/** Classic zod's `z.number().int()` (a safe integer), followed by `checks`. */
export const int = (...checks: z.core.$ZodCheck<number>[]) => z.number().check(z.int(), ...checks);
