// One tool call with the official TypeScript MCP SDK client over Streamable HTTP.
// Usage: node call.mjs <url> <token> <tool> <json arguments>; prints the result as JSON.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, tool, args] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "cortex-ts-test", version: "1.0.0" });
await client.connect(transport);
const result = await client.callTool({ name: tool, arguments: JSON.parse(args) });
process.stdout.write(JSON.stringify({ protocol: transport.protocolVersion ?? null, result }));
await client.close();
