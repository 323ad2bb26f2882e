import type { ServerResponse } from "node:http";
import { type MockServer, type RecordedRequest, startMockServer } from "../helpers/mock-server.ts";

/**
 * A mock AWS STS over real HTTP for AssumeRole, in the Query protocol the STS API reference documents:
 * `POST /` with a form body (`Action=AssumeRole&Version=2011-06-15&RoleArn=...&RoleSessionName=...`,
 * `ExternalId`, `DurationSeconds`, `Tags.member.N.Key` / `.Value`), signed with SigV4 for service `sts`;
 * answered with `<AssumeRoleResponse>` XML holding `Credentials` (AccessKeyId, SecretAccessKey, SessionToken,
 * Expiration), or `<ErrorResponse><Error><Type/><Code/><Message/></Error>` with 403 (AccessDenied) or 400.
 */
export interface StsMock extends MockServer {
  /** Roles that may be assumed, with the external id each requires (if any). */
  roles: Map<string, { externalId?: string }>;
  /** The forms of the AssumeRole calls received. */
  calls: URLSearchParams[];
}

const xmlError = (response: ServerResponse, status: number, code: string, message: string) => {
  response.writeHead(status, { "content-type": "text/xml" });
  response.end(
    `<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type><Code>${code}</Code><Message>${message}</Message></Error><RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId></ErrorResponse>`,
  );
};

export async function startStsMock(): Promise<StsMock> {
  const roles = new Map<string, { externalId?: string }>();
  const calls: URLSearchParams[] = [];
  let issued = 0;
  const route = (request: RecordedRequest, response: ServerResponse) => {
    const authorization = String(request.headers.authorization ?? "");
    if (!/^AWS4-HMAC-SHA256 Credential=[^/]+\/\d{8}\/[a-z0-9-]+\/sts\/aws4_request, /.test(authorization))
      return xmlError(response, 403, "IncompleteSignature", "Request must be signed for sts");
    const form = new URLSearchParams(request.body.toString("utf8"));
    calls.push(form);
    if (form.get("Action") !== "AssumeRole" || form.get("Version") !== "2011-06-15")
      return xmlError(response, 400, "InvalidAction", "Could not find operation");
    const roleArn = form.get("RoleArn") ?? "";
    const role = roles.get(roleArn);
    if (!role || (role.externalId !== undefined && form.get("ExternalId") !== role.externalId))
      return xmlError(
        response,
        403,
        "AccessDenied",
        `User is not authorized to perform: sts:AssumeRole on resource: ${roleArn}`,
      );
    issued++;
    const expiration = new Date(Date.now() + Number(form.get("DurationSeconds") ?? 3600) * 1000).toISOString();
    response.writeHead(200, { "content-type": "text/xml" });
    response.end(`<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleResult>
    <SourceIdentity>gateway</SourceIdentity>
    <AssumedRoleUser>
      <Arn>${roleArn.replace(":role/", ":assumed-role/")}/${form.get("RoleSessionName")}</Arn>
      <AssumedRoleId>ARO123EXAMPLE123:${form.get("RoleSessionName")}</AssumedRoleId>
    </AssumedRoleUser>
    <Credentials>
      <AccessKeyId>ASIAMOCK${String(issued).padStart(8, "0")}</AccessKeyId>
      <SecretAccessKey>mock-session-secret-${issued}</SecretAccessKey>
      <SessionToken>mock-session-token-${issued}&amp;more</SessionToken>
      <Expiration>${expiration}</Expiration>
    </Credentials>
    <PackedPolicySize>6</PackedPolicySize>
  </AssumeRoleResult>
  <ResponseMetadata><RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId></ResponseMetadata>
</AssumeRoleResponse>`);
  };
  const server = await startMockServer(route);
  return { ...server, roles, calls };
}
