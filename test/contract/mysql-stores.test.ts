import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe } from "vitest";
import type { MysqlStores } from "../../core/platform/mysql/mysql-stores.ts";
import { AesGcmSecrets } from "../../core/store/aes-gcm.ts";
import { type TestMysqlStores, testMysqlStores } from "../helpers/mysql-stores.ts";
import { blobsContract } from "./blobs.contract.ts";
import { countersContract } from "./counters.contract.ts";
import { logSinkContract } from "./log-sink.contract.ts";
import { queueContract } from "./queue.contract.ts";
import { recordsContract } from "./records.contract.ts";
import { secretsContract } from "./secrets.contract.ts";
import { vectorIndexContract } from "./vector-index.contract.ts";

let opened: TestMysqlStores;
let stores: MysqlStores;

beforeAll(async () => {
  opened = await testMysqlStores("contract");
  stores = opened.stores;
});

afterAll(async () => {
  await opened?.close();
});

describe("MySQL stores (MariaDB; blobs on an S3-compatible store)", () => {
  recordsContract(() => stores.records);
  describe("request-log records (request_logs)", () => recordsContract(() => stores.logSink.records));
  logSinkContract(() => stores);
  countersContract(() => stores.counters);
  blobsContract(() => stores.blobs);
  queueContract(async () => ({ queue: stores.queue, name: `queue-${randomUUID()}` }));
  secretsContract(() => new AesGcmSecrets(randomBytes(32)));
  vectorIndexContract(() => stores.vectors);
});
