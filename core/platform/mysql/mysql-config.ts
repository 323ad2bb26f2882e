import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Settings } from "../../config/settings.ts";
import { parseMasterKey } from "../../store/aes-gcm.ts";
import type { Blobs } from "../../store/ports.ts";
import type { SecretResolver } from "../../store/secret-refs.ts";
import { FolderBlobs } from "../local/folder-blobs.ts";
import type { DatabaseOptions } from "./database.ts";
import { createMysqlStores, type MysqlStores } from "./mysql-stores.ts";

/**
 * GATEWAY_STORE=mysql: the MySQL stores as the settings describe them (docs/self-hosting.md). Everything every
 * replica must agree on comes from the environment: the database, the master key (GATEWAY_MASTER_KEY or
 * GATEWAY_MASTER_KEY_FILE, never generated here: each replica would make its own), the blob store. A missing
 * piece stops the start with a message naming it.
 */
export async function mysqlStoresFromSettings(
  settings: Settings,
  options: { publicBaseUrl: () => string; secretRefs?: SecretResolver },
): Promise<MysqlStores> {
  const masterKey = masterKeyOf(settings);
  const { blobs, close } = await blobsOf(settings, masterKey, options.publicBaseUrl);
  return createMysqlStores({
    database: databaseOf(settings),
    logDatabase: settings.LOG_STORE_DATABASE_URL
      ? { ...databaseOf(settings), url: settings.LOG_STORE_DATABASE_URL }
      : undefined,
    logStore: {
      threshold: settings.LOG_STORE_CONNECTION_FAILURE_THRESHOLD,
      backoffMs: settings.LOG_STORE_CONNECTION_BACKOFF_MS,
      timeoutMs: settings.LOG_STORE_CONNECTION_TIMEOUT_MS,
    },
    logBuffer: {
      dir: settings.GATEWAY_LOG_BUFFER_DIR ?? join(settings.GATEWAY_DATA_DIR, "log-buffer"),
      maxBytes: settings.GATEWAY_LOG_BUFFER_MAX_MB * 1024 * 1024,
    },
    blobs,
    closeBlobs: close,
    masterKey,
    vectorLimits: {
      maxEntries: settings.GATEWAY_SEMANTIC_CACHE_MAX_ENTRIES,
      maxEntriesPerScope: settings.GATEWAY_SEMANTIC_CACHE_MAX_ENTRIES_PER_SCOPE,
    },
    secretRefs: options.secretRefs,
  });
}

export function databaseOf(settings: Settings): DatabaseOptions {
  const common = {
    poolSize: settings.DB_POOL_SIZE,
    tls: settings.DB_TLS,
    caFile: settings.DB_TLS_CA_FILE,
  };
  if (settings.DATABASE_URL) return { ...common, url: settings.DATABASE_URL };
  if (!settings.DB_HOST || !settings.DB_NAME || !settings.DB_USER) {
    throw new Error(
      "GATEWAY_STORE=mysql needs DATABASE_URL (mysql://user:password@host:3306/database) or DB_HOST, DB_USER, DB_PASSWORD and DB_NAME",
    );
  }
  return {
    ...common,
    host: settings.DB_HOST,
    port: settings.DB_PORT,
    user: settings.DB_USER,
    password: settings.DB_PASSWORD,
    database: settings.DB_NAME,
  };
}

function masterKeyOf(settings: Settings): Buffer {
  if (settings.GATEWAY_MASTER_KEY) return parseMasterKey(settings.GATEWAY_MASTER_KEY);
  if (settings.GATEWAY_MASTER_KEY_FILE) return parseMasterKey(readFileSync(settings.GATEWAY_MASTER_KEY_FILE, "utf8"));
  throw new Error(
    "GATEWAY_STORE=mysql needs the master key every replica shares: GATEWAY_MASTER_KEY or GATEWAY_MASTER_KEY_FILE " +
      "(32 random bytes in base64: openssl rand -base64 32)",
  );
}

async function blobsOf(
  settings: Settings,
  masterKey: Buffer,
  publicBaseUrl: () => string,
): Promise<{ blobs: Blobs; close?: () => void }> {
  if (settings.GATEWAY_BLOB_STORE === "folder") {
    if (!settings.GATEWAY_BLOB_DIR) {
      throw new Error("GATEWAY_BLOB_STORE=folder needs GATEWAY_BLOB_DIR, a folder every replica mounts");
    }
    // Download links are served by whichever replica a client reaches: every replica derives the same key.
    const signingKey = createHmac("sha256", masterKey).update("gateway blob url signing").digest();
    return { blobs: new FolderBlobs({ root: settings.GATEWAY_BLOB_DIR, publicBaseUrl, signingKey }) };
  }
  if (!settings.GATEWAY_BUCKET) {
    throw new Error(
      "GATEWAY_STORE=mysql keeps blobs in an S3-compatible bucket: set GATEWAY_BUCKET (and GATEWAY_S3_ENDPOINT)",
    );
  }
  const { s3CompatibleBlobs } = await import("../aws/s3-compatible-blobs.ts");
  return s3CompatibleBlobs({
    bucket: settings.GATEWAY_BUCKET,
    endpoint: settings.GATEWAY_S3_ENDPOINT,
    publicEndpoint: settings.GATEWAY_S3_PUBLIC_ENDPOINT,
    region: settings.GATEWAY_S3_REGION,
    forcePathStyle: settings.GATEWAY_S3_FORCE_PATH_STYLE,
  });
}
