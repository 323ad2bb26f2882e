import { afterAll, beforeAll, describe } from "vitest";
import { type TestMysqlStores, testMysqlStores } from "../helpers/mysql-stores.ts";
import { controlContract } from "./control.contract.ts";
import { policiesContract } from "./policies.contract.ts";

let opened: TestMysqlStores;

beforeAll(async () => {
  opened = await testMysqlStores("control");
});

afterAll(async () => {
  await opened?.close();
});

describe("MySQL stores (MariaDB)", () => {
  policiesContract(() => opened.stores);
  describe("control-plane storage", () => controlContract(() => opened.stores));
});
