import { emulatorStores } from "../helpers/aws-stores.ts";
import { afterAll, beforeAll, describe, inject } from "vitest";
import type { Stores } from "../../core/store/ports.ts";
import { controlContract } from "./control.contract.ts";
import { policiesContract } from "./policies.contract.ts";

const emulators = inject("emulators");
let stores: Stores;

beforeAll(() => {
  stores = emulatorStores(emulators);
});

afterAll(async () => {
  await stores?.close();
});

describe("AWS stores (dynalite)", () => {
  policiesContract(() => stores);
  describe("control-plane storage", () => controlContract(() => stores));
});
