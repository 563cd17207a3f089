// Drives MemoryHub's /mcp with the TypeScript SDK's client and prints one JSON line:
//   MEMORYHUB_TOKEN=<agent token> node mcp_client.mjs URL MODE 'CALLS'
// MODE is the SDK's version negotiation: "legacy" (the initialize handshake) or "auto"
// (the per-request protocol when the server offers it). CALLS is a JSON list of
// [tool, arguments]. The line holds the protocol spoken, the tools listed and each
// call's outcome, or the error that stopped the session.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const [url, mode, calls] = process.argv.slice(2);
const token = process.env.MEMORYHUB_TOKEN ?? "";
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client(
  { name: "memoryhub-tests", version: "1" },
  { versionNegotiation: { mode } },
);
const report = {};
try {
  await client.connect(transport);
  report.protocol = transport.protocolVersion;
  report.tools = (await client.listTools()).tools.map((tool) => tool.name);
  report.calls = [];
  for (const [name, args] of JSON.parse(calls)) {
    try {
      const result = await client.callTool({ name, arguments: args });
      report.calls.push({
        name,
        isError: Boolean(result.isError),
        text: result.content?.[0]?.text ?? "",
        structured: result.structuredContent ?? null,
      });
    } catch (error) {
      report.calls.push({ name, error: String(error?.message ?? error) });
    }
  }
} catch (error) {
  report.error = String(error?.message ?? error);
} finally {
  await client.close().catch(() => {});
}
console.log(JSON.stringify(report));
