import * as z from "zod/mini";
import "../../../http/zod-mini.ts";
import { isUploadedFile, type UploadedFile } from "../../../providers/uploaded-file.ts";

/**
 * Fields of multipart request bodies (core/inference/gateway/multipart-body.ts): every text field arrives as a string, so
 * numbers and booleans are read from their text (a JSON client's numbers are accepted too, for batch lines).
 */

export const formFile = z.custom<UploadedFile>(isUploadedFile, "expected a file part");

/** A form integer: `"2"` or 2; anything else (`"2.5"`, `"two"`) is refused. */
export const formInt = (min: number, max: number) =>
  z
    .pipe(
      z.union([z.number(), z.string().check(z.regex(/^-?\d+$/, "expected an integer"))]),
      z.transform((value) => Number(value)),
    )
    .check(z.int(), z.minimum(min), z.maximum(max));

/** A form number in [min, max]: `"0.5"` or 0.5. */
export const formNumber = (min: number, max: number) =>
  z
    .pipe(
      z.union([z.number(), z.string().check(z.regex(/^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/, "expected a number"))]),
      z.transform((value) => Number(value)),
    )
    .check(z.minimum(min), z.maximum(max));

/** A form boolean: `"true"`/`"false"` (and 1/0, as HTML forms send them) or a JSON boolean. */
export const formBoolean = z.union([z.boolean(), z.stringbool()]);

/**
 * One value or several under one name (`image`, or `image[]` / a repeated part): kept as sent, so the provider
 * gets the form's shape the client chose (OpenAI's older image models take one `image`, gpt-image several).
 */
export const oneOrMany = <T extends z.core.SomeType>(item: T, max: number) =>
  z.union([z.array(item).check(z.minLength(1), z.maxLength(max)), item]);
