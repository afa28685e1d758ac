import DNS from 'dns2';

const { Packet } = DNS;

/** What the server answers for a name: TXT values, silence (the resolver times out), or SERVFAIL. */
export type DnsAnswer = string[] | 'timeout' | 'servfail';

/**
 * A real DNS server on loopback (dns2 over UDP, random port) whose TXT records a test sets and
 * removes. Names it does not know answer NOERROR with no records (NODATA). TTLs are 0 so the
 * resolver's cache never hides a change.
 */
export class TestDnsServer {
  readonly records = new Map<string, DnsAnswer>();
  private readonly server = DNS.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const answer = question ? this.records.get(question.name.toLowerCase()) : undefined;
      if (answer === 'timeout') return;
      if (answer === 'servfail') response.header.rcode = 2;
      else if (question && answer && question.type === Packet.TYPE.TXT) {
        for (const value of answer) response.answers.push(Packet.createResourceFromQuestion(question, { type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 0, data: value }));
      }
      send(response);
    },
  });
  address = '';

  static async start(): Promise<TestDnsServer> {
    const dns = new TestDnsServer();
    const addresses = (await dns.server.listen({ udp: { port: 0, address: '127.0.0.1' } })) as { udp?: { port: number } };
    dns.address = `127.0.0.1:${addresses.udp?.port}`;
    return dns;
  }

  async close(): Promise<void> {
    await this.server.close();
  }
}
