import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Every `ports:` entry of a compose file, with its service (a reader for this file's plain block style). */
function publishedPorts(text: string): { service: string; entry: string }[] {
  const out: { service: string; entry: string }[] = [];
  let service = '';
  let inPorts = false;
  for (const line of text.split('\n')) {
    const serviceMatch = /^ {2}([\w-]+):\s*$/.exec(line);
    if (serviceMatch) service = serviceMatch[1];
    if (/^\s+ports:\s*$/.test(line)) {
      inPorts = true;
      continue;
    }
    const item = /^\s+-\s+['"]?([^'"]+)['"]?\s*$/.exec(line);
    if (inPorts && item) out.push({ service, entry: item[1] });
    else inPorts = false;
  }
  return out;
}

describe('docker-compose.yml', () => {
  const compose = readFileSync(join(__dirname, '..', '..', 'docker-compose.yml'), 'utf8');

  it('publishes every port on 127.0.0.1 only, in both profiles (Postgres is postgres:postgres, Redis has no password)', () => {
    const ports = publishedPorts(compose);
    // Postgres, Redis, the development API and the image profile's API replicas.
    expect(ports.map((p) => p.service).sort()).toEqual(['api', 'api-image', 'postgres', 'redis']);
    for (const port of ports) expect([port.service, port.entry]).toEqual([port.service, expect.stringMatching(/^127\.0\.0\.1:\d/)]);
  });

  it('the reader finds a port published on every interface', () => {
    expect(publishedPorts("services:\n  db:\n    ports:\n      - '5432:5432'\n")).toEqual([{ service: 'db', entry: '5432:5432' }]);
  });
});
