import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import mysql from "mysql2/promise";

/**
 * A private MariaDB server for tests and the benchmark: Debian's `mariadb-server` (`apt-get install
 * mariadb-server`; .ci/run installs it), run from a fresh data folder as the current user (root included),
 * listening on 127.0.0.1 on a free port and on a socket in that folder, with a self-signed TLS certificate for
 * 127.0.0.1. Nothing of the machine's own MariaDB (config files, /var/lib/mysql, port 3306) is read or used. A
 * watchdog shell stops the server when the process that owns it (`ownerPid`) is gone, so a killed test run
 * leaves no server behind.
 */

export interface MariaDbServer {
  port: number;
  socketPath: string;
  /** mysqld's process id (pause/resume signal it). */
  pid: number;
  /** The CA file that verifies the server's certificate (DB_TLS_CA_FILE). */
  caFile: string;
  /** A new empty database and a URL for a user of it: mysql://gateway:...@127.0.0.1:port/name */
  createDatabase(name: string): Promise<string>;
  /** SIGSTOP: the server hangs (connections open but nothing answers), as a stuck database does. */
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

const SERVER_BINARIES = ["/usr/sbin/mariadbd", "/usr/sbin/mysqld"];
export const USER = "gateway";

/** The folder of a test run's shared server inside the run's folder (test/setup/mariadb.ts, global.ts). */
export const sharedServerDir = (runDir: string) => join(runDir, "server");

/** Where mariadbd is installed, or undefined. */
export function mariadbBinary(): string | undefined {
  return SERVER_BINARIES.find((path) => existsSync(path));
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface StartOptions {
  /** Folder for the data, socket, logs and certificate (created; removed by stop()). */
  dir: string;
  /** The server stops when this process is gone (default: the calling process). */
  ownerPid?: number;
  /** InnoDB buffer pool, MB (default 128). */
  bufferPoolMb?: number;
}

export async function startMariaDb(options: StartOptions): Promise<MariaDbServer> {
  const binary = mariadbBinary();
  if (!binary) {
    throw new Error("MariaDB is not installed: apt-get update && apt-get install -y mariadb-server (.ci/run does)");
  }
  const { dir } = options;
  const dataDir = join(dir, "data");
  mkdirSync(dir, { recursive: true });
  execFileSync(
    "mariadb-install-db",
    [
      "--no-defaults",
      `--datadir=${dataDir}`,
      "--user=root",
      "--auth-root-authentication-method=normal",
      "--skip-test-db",
    ],
    { stdio: "ignore" },
  );
  const caFile = join(dir, "cert.pem");
  execFileSync(
    "openssl",
    [
      ...["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "7", "-subj", "/CN=127.0.0.1"],
      ...["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", join(dir, "key.pem"), "-out", caFile],
    ],
    { stdio: "ignore" },
  );
  const socketPath = join(dir, "mysqld.sock");
  const password = randomBytes(12).toString("hex");
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const args = [
      "--no-defaults",
      `--datadir=${dataDir}`,
      "--user=root",
      `--socket=${socketPath}`,
      `--port=${port}`,
      "--bind-address=127.0.0.1",
      "--skip-name-resolve",
      `--pid-file=${join(dir, "mysqld.pid")}`,
      `--log-error=${join(dir, "error.log")}`,
      `--innodb-buffer-pool-size=${options.bufferPoolMb ?? 128}M`,
      "--innodb-log-file-size=64M",
      "--max-connections=500",
      "--performance-schema=OFF",
      `--ssl-cert=${caFile}`,
      `--ssl-key=${join(dir, "key.pem")}`,
    ];
    const owner = options.ownerPid ?? process.pid;
    // The watchdog: runs the server and stops it once the owner is gone (or the server exited by itself).
    const script = `"$0" "$@" & child=$!; echo $child > "${join(dir, "child.pid")}"
      while kill -0 ${owner} 2>/dev/null && kill -0 $child 2>/dev/null; do sleep 1; done
      kill -TERM $child 2>/dev/null; kill -CONT $child 2>/dev/null; wait $child
      [ -e "${join(dir, "stopped")}" ] || rm -rf "${dir}"`;
    const watchdog = spawn("sh", ["-c", script, binary, ...args], { detached: true, stdio: "ignore" });
    watchdog.unref();
    const pid = await waitUntilReady(dir, socketPath);
    if (pid === undefined) {
      const log = existsSync(join(dir, "error.log")) ? readFileSync(join(dir, "error.log"), "utf8") : "";
      if (attempt < 3 && /already in use|Can't start server/i.test(log)) continue;
      throw new Error(`MariaDB did not start:\n${log.slice(-2000)}`);
    }
    await asRoot(socketPath, async (connection) => {
      await connection.query(`CREATE USER '${USER}'@'127.0.0.1' IDENTIFIED BY '${password}'`);
      await connection.query(`GRANT ALL PRIVILEGES ON *.* TO '${USER}'@'127.0.0.1'`);
    });
    const server = { dir, port, socketPath, pid, caFile, password };
    writeFileSync(join(dir, "server.json"), JSON.stringify(server), { mode: 0o600 });
    return serverHandle(server);
  }
}

interface ServerFacts {
  dir: string;
  port: number;
  socketPath: string;
  pid: number;
  caFile: string;
  password: string;
}

/** A server another process started in `dir` (startMariaDb wrote server.json there once it was ready). */
export function attachMariaDb(dir: string): MariaDbServer | undefined {
  const file = join(dir, "server.json");
  return existsSync(file) ? serverHandle(JSON.parse(readFileSync(file, "utf8")) as ServerFacts) : undefined;
}

function serverHandle(server: ServerFacts): MariaDbServer {
  const { dir, port, socketPath, pid, caFile, password } = server;
  return {
    port,
    socketPath,
    pid,
    caFile,
    async createDatabase(name) {
      if (!/^[a-z0-9_]+$/i.test(name)) throw new RangeError(`database name '${name}'`);
      await asRoot(socketPath, (connection) => connection.query(`CREATE DATABASE IF NOT EXISTS \`${name}\``));
      return `mysql://${USER}:${password}@127.0.0.1:${port}/${name}`;
    },
    pause: () => process.kill(pid, "SIGSTOP"),
    resume: () => process.kill(pid, "SIGCONT"),
    async stop() {
      try {
        process.kill(pid, "SIGCONT");
        process.kill(pid, "SIGTERM");
      } catch {
        // gone already
      }
      for (let i = 0; i < 200 && alive(pid); i++) await sleep(50);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Connects as root over the socket (the only way root may sign in) and runs `work`. */
async function asRoot<T>(socketPath: string, work: (connection: mysql.Connection) => Promise<T>): Promise<T> {
  const connection = await mysql.createConnection({ socketPath, user: "root" });
  try {
    return await work(connection);
  } finally {
    await connection.end();
  }
}

async function waitUntilReady(dir: string, socketPath: string): Promise<number | undefined> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const childFile = join(dir, "child.pid");
    const child = existsSync(childFile) ? Number(readFileSync(childFile, "utf8")) : undefined;
    if (child !== undefined && child > 0 && !alive(child)) return undefined;
    if (existsSync(socketPath)) {
      try {
        await asRoot(socketPath, (connection) => connection.query("SELECT 1"));
        return child;
      } catch {
        // not accepting yet
      }
    }
    await sleep(100);
  }
  return undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
