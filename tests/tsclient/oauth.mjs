// The official TypeScript MCP SDK client signing in with OAuth, then one brain_read.
// Usage: node oauth.mjs <mcp url> <redirect url>. Prints "AUTHORIZE <url>" for the test to open
// in a browser, reads the URL the browser was sent back to on stdin, finishes the sign-in and
// prints the tool's result as JSON.
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, redirect] = process.argv.slice(2);
const kept = {};
const provider = {
  get redirectUrl() { return redirect; },
  get clientMetadata() {
    return { client_name: "cortex-ts-test", redirect_uris: [redirect], grant_types: ["authorization_code", "refresh_token"],
             response_types: ["code"], token_endpoint_auth_method: "none" };
  },
  clientInformation() { return kept.client; },
  saveClientInformation(info) { kept.client = info; },
  tokens() { return kept.tokens; },
  saveTokens(tokens) { kept.tokens = tokens; },
  redirectToAuthorization(authorizationUrl) { process.stdout.write(`AUTHORIZE ${authorizationUrl.href}\n`); },
  saveCodeVerifier(verifier) { kept.verifier = verifier; },
  codeVerifier() { return kept.verifier; },
};

const lines = createInterface({ input: process.stdin });
const nextLine = () => new Promise((resolve) => lines.once("line", resolve));

let transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
let client = new Client({ name: "cortex-ts-test", version: "1.0.0" });
try {
  await client.connect(transport);
} catch (err) {
  if (!(err instanceof UnauthorizedError)) throw err;
  const back = new URL(await nextLine());
  await transport.finishAuth(back.searchParams.get("code"));
  transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  client = new Client({ name: "cortex-ts-test", version: "1.0.0" });
  await client.connect(transport);
}
const result = await client.callTool({ name: "brain_read", arguments: { path: "profile.md" } });
process.stdout.write(JSON.stringify({ result }) + "\n");
await client.close();
lines.close();
