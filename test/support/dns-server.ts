// eslint-disable-next-line @typescript-eslint/no-require-imports
const dns2 = require('dns2') as {
  createServer(options: { udp: boolean; handle: (request: DnsPacket, send: (response: DnsPacket) => void) => void }): DnsServer;
  Packet: { TYPE: Record<string, number>; CLASS: Record<string, number>; createResponseFromRequest(request: DnsPacket): DnsPacket };
};

interface DnsPacket {
  questions: { name: string; type: number }[];
  answers: object[];
}
interface DnsServer {
  listen(options: { udp: { port: number; address: string } }): Promise<void>;
  addresses(): { udp: { port: number } };
  close(): Promise<void>;
}

/** Answers for one name: A and AAAA records, or a function of how many A queries came before. */
export type Zone = Record<string, { a?: string[] | ((queries: number) => string[]); aaaa?: string[] }>;

/** A DNS server on loopback (dns2) answering from `zone`; unknown names get no answer (NXDOMAIN-like). */
export async function startDnsServer(zone: Zone): Promise<{ server: string; close: () => Promise<void>; queries: Map<string, number> }> {
  const { Packet } = dns2;
  const queries = new Map<string, number>();
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const entry = zone[question.name.toLowerCase()];
      if (entry && question.type === Packet.TYPE.A) {
        const count = queries.get(question.name) ?? 0;
        queries.set(question.name, count + 1);
        const addresses = typeof entry.a === 'function' ? entry.a(count) : (entry.a ?? []);
        for (const address of addresses) response.answers.push({ name: question.name, type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: 0, address });
      }
      if (entry && question.type === Packet.TYPE.AAAA) {
        for (const address of entry.aaaa ?? []) response.answers.push({ name: question.name, type: Packet.TYPE.AAAA, class: Packet.CLASS.IN, ttl: 0, address });
      }
      send(response);
    },
  });
  await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  return { server: `127.0.0.1:${server.addresses().udp.port}`, close: () => server.close(), queries };
}
