// A note as a resource with the official TypeScript MCP SDK client over Streamable HTTP:
// lists the resources and the templates, then reads one. Usage: node resource.mjs <url> <token> <uri>;
// prints {protocol, listed, templates, read} as JSON.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, uri] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: "cortex-ts-test", version: "1.0.0" });
await client.connect(transport);
const listed = await client.listResources();
const templates = await client.listResourceTemplates();
const read = await client.readResource({ uri });
process.stdout.write(JSON.stringify({ protocol: transport.protocolVersion ?? null, listed, templates, read }));
await client.close();
