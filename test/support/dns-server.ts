import DNS from 'dns2';

const { Packet } = DNS;

/** What the server answers for a TXT question: values, silence (the resolver times out), or SERVFAIL. */
export type DnsAnswer = string[] | 'timeout' | 'servfail';

/** Address answers for one name: A and AAAA records; `a` may depend on how many A queries came before (DNS rebinding). */
export type Zone = Record<string, { a?: string[] | ((queries: number) => string[]); aaaa?: string[] }>;

/**
 * A real DNS server on loopback (dns2 over UDP, random port). TXT records are set and removed by
 * the test (`records`); A/AAAA answers come from a zone. Names it does not know answer NOERROR with
 * no records. TTLs are 0 so no resolver cache hides a change.
 */
export class TestDnsServer {
  readonly records = new Map<string, DnsAnswer>();
  /** A queries seen per name. */
  readonly queries = new Map<string, number>();
  address = '';
  private readonly server = DNS.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      if (!question) {
        void send(response);
        return;
      }
      const name = question.name.toLowerCase();
      if (question.type === Packet.TYPE.TXT) {
        const answer = this.records.get(name);
        if (answer === 'timeout') return;
        if (answer === 'servfail') response.header.rcode = 2;
        else
          for (const value of answer ?? [])
            response.answers.push(Packet.createResourceFromQuestion(question, { type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 0, data: value }));
      }
      const entry = this.zone[name];
      if (entry && question.type === Packet.TYPE.A) {
        const count = this.queries.get(question.name) ?? 0;
        this.queries.set(question.name, count + 1);
        const addresses = typeof entry.a === 'function' ? entry.a(count) : (entry.a ?? []);
        for (const address of addresses)
          response.answers.push(Packet.createResourceFromQuestion(question, { type: Packet.TYPE.A, class: Packet.CLASS.IN, ttl: 0, address }));
      }
      if (entry && question.type === Packet.TYPE.AAAA) {
        for (const address of entry.aaaa ?? [])
          response.answers.push(Packet.createResourceFromQuestion(question, { type: Packet.TYPE.AAAA, class: Packet.CLASS.IN, ttl: 0, address }));
      }
      void send(response);
    },
  });

  private constructor(private readonly zone: Zone) {}

  static async start(zone: Zone = {}): Promise<TestDnsServer> {
    const dns = new TestDnsServer(zone);
    const addresses = (await dns.server.listen({ udp: { port: 0, address: '127.0.0.1' } })) as { udp?: { port: number } };
    dns.address = `127.0.0.1:${addresses.udp?.port}`;
    return dns;
  }

  async close(): Promise<void> {
    await this.server.close();
  }
}

/** The zone-only form the git-server tests use: the server's address, a way to stop it, the A query counts. */
export async function startDnsServer(zone: Zone): Promise<{ server: string; close: () => Promise<void>; queries: Map<string, number> }> {
  const dns = await TestDnsServer.start(zone);
  return { server: dns.address, close: () => dns.close(), queries: dns.queries };
}
