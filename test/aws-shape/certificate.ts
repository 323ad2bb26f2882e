import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getCACertificates, setDefaultCACertificates } from "node:tls";

/**
 * The Router's TLS certificate: self-signed for 127.0.0.1 and localhost, made with the openssl CLI (as the
 * realtime TLS test makes its own). CloudFront terminates TLS for the distribution; the gateway builds its public
 * URLs (OAuth issuer, SSO callbacks) as https, so the shape's Router speaks https too.
 */
export function selfSignedCertificate(): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), "shape-tls-"));
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1,DNS:localhost",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
      ],
      { stdio: "ignore" },
    );
    return { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Makes this process's TLS clients (fetch, the SDKs, ws) trust `cert` besides the usual roots. */
export function trustCertificate(cert: Buffer): void {
  const pem = cert.toString("utf8");
  const current = getCACertificates("default");
  if (!current.includes(pem)) setDefaultCACertificates([...current, pem]);
}
