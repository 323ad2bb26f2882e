import { describe, expect, it } from "vitest";
import {
  FilterSyntaxError,
  MAX_FILTER_CHARS,
  MAX_FILTER_DEPTH,
  matchesFilter,
  parseFilter,
} from "../../../core/scim/filter.ts";
import { PatchError, applyPatch } from "../../../core/scim/patch.ts";

const user = {
  userName: "Ada@Example.com",
  externalId: "00u1",
  active: true,
  name: { givenName: "Ada", familyName: "Lovelace" },
  emails: [
    { value: "ada@example.com", type: "work", primary: true },
    { value: "ada@home.example", type: "home" },
  ],
};

describe("SCIM filters", () => {
  it("matches Okta's and Entra's lookups", () => {
    expect(matchesFilter(parseFilter('userName eq "ada@example.com"'), user)).toBe(true);
    expect(matchesFilter(parseFilter('username EQ "other@example.com"'), user)).toBe(false);
    expect(matchesFilter(parseFilter('externalId eq "00u1"'), user)).toBe(true);
    expect(matchesFilter(parseFilter('externalId eq "00U1"'), user)).toBe(false); // caseExact
    expect(matchesFilter(parseFilter('emails[type eq "work"].value eq "ada@example.com"'), user)).toBe(true);
    expect(matchesFilter(parseFilter('emails[type eq "home"].value eq "ada@example.com"'), user)).toBe(false);
    expect(matchesFilter(parseFilter('name.familyName sw "Love" and active eq true'), user)).toBe(true);
    expect(matchesFilter(parseFilter('not (active eq true) or userName co "nobody"'), user)).toBe(false);
    expect(matchesFilter(parseFilter("externalId pr"), user)).toBe(true);
    expect(
      matchesFilter(parseFilter('urn:ietf:params:scim:schemas:core:2.0:User:userName eq "ada@example.com"'), user),
    ).toBe(true);
  });

  it("refuses what is not a filter", () => {
    for (const bad of ["userName eq", 'userName xx "a"', '(userName eq "a"', 'userName eq "a', ""]) {
      expect(() => parseFilter(bad)).toThrow(FilterSyntaxError);
    }
  });
});

describe("SCIM filter bounds", () => {
  const nestedFilter = (depth: number) => `${"(".repeat(depth)}userName eq "ada@example.com"${")".repeat(depth)}`;

  it("refuses deep nesting and long filters with a FilterSyntaxError, never a stack overflow", () => {
    expect(matchesFilter(parseFilter(nestedFilter(MAX_FILTER_DEPTH)), user)).toBe(true);
    expect(() => parseFilter(nestedFilter(MAX_FILTER_DEPTH + 1))).toThrow(/deeper than 16/);
    expect(() => parseFilter("(".repeat(100_000))).toThrow(FilterSyntaxError);
    expect(() => parseFilter(`${"not (".repeat(MAX_FILTER_DEPTH + 1)}active eq true${")".repeat(17)}`)).toThrow(
      FilterSyntaxError,
    );
    const deepValuePath = `emails[${"(".repeat(MAX_FILTER_DEPTH)}type eq "work"${")".repeat(MAX_FILTER_DEPTH)}].value pr`;
    expect(() => parseFilter(deepValuePath)).toThrow(FilterSyntaxError);
    const long = Array.from({ length: 500 }, () => "active eq true").join(" and ");
    expect(long.length).toBeGreaterThan(MAX_FILTER_CHARS);
    expect(() => parseFilter(long)).toThrow(/longer than 4096/);
    // The longest chain that fits still parses and evaluates.
    const chain = Array.from({ length: 200 }, () => "active eq true").join(" and ");
    expect(matchesFilter(parseFilter(chain), user)).toBe(true);
  });
});

describe("SCIM PATCH", () => {
  it("Okta: path-less replace of active", () => {
    expect(applyPatch(user, [{ op: "replace", value: { active: false } }]).active).toBe(false);
  });

  it("Entra: capitalised op, string boolean, dotted keys and filtered paths", () => {
    const patched = applyPatch(user, [
      { op: "Replace", path: "active", value: "False" },
      { op: "Replace", value: { "name.givenName": "Augusta" } },
      { op: "Replace", path: 'emails[type eq "work"].value', value: "augusta@example.com" },
    ]);
    expect(patched.active).toBe(false);
    expect(patched.name).toEqual({ givenName: "Augusta", familyName: "Lovelace" });
    expect((patched.emails as any[])[0]).toEqual({ value: "augusta@example.com", type: "work", primary: true });
    expect(user.active).toBe(true); // the input is not changed
  });

  it("group members: add (deduplicated), remove by filter (Okta) and by value list (Entra), replace", () => {
    const group = { displayName: "Eng", members: [{ value: "usr_1" }] };
    const added = applyPatch(group, [{ op: "add", path: "members", value: [{ value: "usr_2" }, { value: "usr_1" }] }]);
    expect(added.members).toEqual([{ value: "usr_1" }, { value: "usr_2" }]);
    const okta = applyPatch(added, [{ op: "remove", path: 'members[value eq "usr_1"]' }]);
    expect(okta.members).toEqual([{ value: "usr_2" }]);
    const entra = applyPatch(added, [{ op: "Remove", path: "members", value: [{ value: "usr_2" }] }]);
    expect(entra.members).toEqual([{ value: "usr_1" }]);
    const replaced = applyPatch(added, [{ op: "replace", path: "members", value: [{ value: "usr_3" }] }]);
    expect(replaced.members).toEqual([{ value: "usr_3" }]);
    const renamed = applyPatch(group, [{ op: "replace", value: { id: "grp_x", displayName: "Platform" } }]);
    expect(renamed.displayName).toBe("Platform");
  });

  it("refuses unknown ops, a remove without path and a non-boolean active", () => {
    expect(() => applyPatch(user, [{ op: "move", path: "active", value: 1 }])).toThrow(PatchError);
    expect(() => applyPatch(user, [{ op: "remove" }])).toThrow(/path/);
    try {
      applyPatch(user, [{ op: "replace", path: "active", value: "maybe" }]);
      expect.unreachable();
    } catch (error) {
      expect((error as PatchError).scimType).toBe("invalidValue");
    }
    expect(() => applyPatch(user, [{ op: "replace", path: "emails[type eq", value: "x" }])).toThrow(PatchError);
  });
});
