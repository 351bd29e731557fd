import { Client, StreamableHTTPClientTransport, SSEClientTransport } from '@modelcontextprotocol/client';
import { spawn } from 'node:child_process';
const modern = process.argv[2];
const child = spawn(process.execPath, ['test/fixtures/servers/http-basic.mjs', '0', ...(modern ? ['--modern'] : [])], { stdio: ['pipe', 'pipe', 'inherit'] });
const port = await new Promise((r) => child.stdout.on('data', (d) => { const m = /LISTENING (\d+)/.exec(String(d)); if (m) r(Number(m[1])); }));
const base = `http://127.0.0.1:${port}`;
const c = new Client({ name: 't', version: '1' }, modern ? { versionNegotiation: { mode: 'auto' } } : {});
c.onerror = (e) => console.log('ONERROR', e.message);
const t = new StreamableHTTPClientTransport(new URL(base + '/mcp'));
await c.connect(t);
console.log('era', c.getProtocolEra(), c.getNegotiatedProtocolVersion(), 'sid', t.sessionId);
console.log(JSON.stringify(await c.callTool({ name: 'echo', arguments: { text: 'a' } })));
console.log(await (await fetch(base + '/stats')).text());
console.log(await (await fetch(base + '/drop-sessions', { method: 'POST' })).text());
try { console.log(JSON.stringify(await c.callTool({ name: 'echo', arguments: { text: 'b' } }))); } catch (e) { console.log('ERR', e.constructor.name, e.code, e.message) }
try { console.log(JSON.stringify(await c.callTool({ name: "forget", arguments: {} }))); } catch (e) { console.log("ERR forget", e.message) }
await new Promise(r => setTimeout(r, 100));
try { console.log(JSON.stringify(await c.callTool({ name: 'echo', arguments: { text: 'c' } }))); } catch (e) { console.log('ERR', e.constructor.name, e.code, e.message) }
await c.close().catch(e => console.log('close err', e.message));
child.kill();
console.log("END")
