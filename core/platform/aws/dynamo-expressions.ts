import type { WriteCondition } from "../../store/ports.ts";

/**
 * Collects placeholders for one DynamoDB request. Every attribute goes through `#name` placeholders, so
 * reserved words (`ttl`, `value`, `data`...) and odd attribute names are always safe.
 */
export class Expression {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};
  #nameCount = 0;
  #valueCount = 0;
  readonly #byName = new Map<string, string>();

  name(attribute: string): string {
    let placeholder = this.#byName.get(attribute);
    if (!placeholder) {
      placeholder = `#n${this.#nameCount++}`;
      this.#byName.set(attribute, placeholder);
      this.names[placeholder] = attribute;
    }
    return placeholder;
  }

  value(value: unknown): string {
    const placeholder = `:v${this.#valueCount++}`;
    this.values[placeholder] = value;
    return placeholder;
  }

  /** The item exists and has not expired. */
  live(now: number): string {
    const ttl = this.name("ttl");
    return `(attribute_exists(${this.name("pk")}) AND (attribute_not_exists(${ttl}) OR ${ttl} >= ${this.value(now)}))`;
  }

  /** The item is absent or expired: what the Records port calls absent. */
  absent(now: number): string {
    return `(attribute_not_exists(${this.name("pk")}) OR ${this.name("ttl")} < ${this.value(now)})`;
  }

  /** A WriteCondition as a ConditionExpression, with expired items treated as absent. */
  condition(condition: WriteCondition | undefined, now: number): string | undefined {
    if (!condition) return undefined;
    const parts: string[] = [];
    let needsLive = condition.exists === true;
    if (condition.exists === false) parts.push(this.absent(now));
    for (const [attribute, expected] of Object.entries(condition.equals ?? {})) {
      const name = this.name(attribute);
      if (expected === null) {
        // "Attribute absent" also holds when the whole item is expired.
        parts.push(`(attribute_not_exists(${name}) OR ${this.name("ttl")} < ${this.value(now)})`);
      } else {
        parts.push(`${name} = ${this.value(expected)}`);
        needsLive = true;
      }
    }
    if (needsLive) parts.push(this.live(now));
    return parts.length > 0 ? parts.join(" AND ") : undefined;
  }

  /** Names and values for the request, leaving out empty maps (DynamoDB rejects them). */
  attributes(): { ExpressionAttributeNames?: Record<string, string>; ExpressionAttributeValues?: Record<string, any> } {
    return {
      ...(this.#nameCount > 0 ? { ExpressionAttributeNames: this.names } : {}),
      ...(this.#valueCount > 0 ? { ExpressionAttributeValues: this.values } : {}),
    };
  }
}
