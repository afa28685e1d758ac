import { decodeJunit, JunitError, MAX_JUNIT_DEPTH, readJunit } from './junit';

const limits = { maxFailures: 50, maxTestLength: 500, maxFileLength: 500 };
const read = (xml: string, l = limits) => readJunit(xml, l);
const refusal = (xml: string): string => {
  try {
    read(xml);
  } catch (error) {
    if (error instanceof JunitError) return error.message;
    throw error;
  }
  throw new Error('accepted');
};

describe('JUnit XML reports', () => {
  it('reads failing and erroring test cases in document order, across nested suites; skipped and passing ones are counted only', () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<!-- produced by a runner -->
<testsuites name="all" tests="5">
  <testsuite name="api">
    <testcase classname="api.Login" name="rejects a bad password" file="test/login.spec.ts" time="0.1">
      <failure message="expected 401" type="AssertionError"><![CDATA[at login.spec.ts:12 <not markup> & more]]></failure>
      <system-out>log &amp; more &#x41;&#65;</system-out>
    </testcase>
    <testcase classname="api.Login" name="accepts a good one"/>
    <testsuite name="nested">
      <testcase name="db &lt;migrate&gt;"><error type="Timeout">took too long</error></testcase>
    </testsuite>
  </testsuite>
  <testsuite name="skips"><testcase classname="s" name="later"><skipped/></testcase></testsuite>
  <testcase classname="root.level" name="both"><failure/><error/></testcase>
</testsuites>`;
    expect(read(xml)).toEqual({
      tests: 5,
      skipped: 1,
      failed: 3,
      failures: [
        { test: 'api.Login.rejects a bad password', file: 'test/login.spec.ts', kind: 'failure' },
        { test: 'db <migrate>', kind: 'error' },
        { test: 'root.level.both', kind: 'failure' },
      ],
      truncated: false,
    });
  });

  it('a single <testsuite> root with only passing cases fails nothing', () => {
    expect(read('<testsuite tests="2"><testcase name="a"/><testcase name="b"></testcase></testsuite>')).toEqual({
      tests: 2,
      skipped: 0,
      failed: 0,
      failures: [],
      truncated: false,
    });
    expect(read('<testsuites/>')).toMatchObject({ tests: 0, failed: 0 });
  });

  it('keeps at most maxFailures failures and cuts long names', () => {
    const cases = Array.from({ length: 7 }, (_, i) => `<testcase name="t${i}"><failure/></testcase>`).join('');
    const summary = read(`<testsuite>${cases}<testcase name="${'x'.repeat(40)}" file="${'f'.repeat(40)}"><error/></testcase></testsuite>`, {
      maxFailures: 3,
      maxTestLength: 10,
      maxFileLength: 5,
    });
    expect(summary).toMatchObject({ tests: 8, failed: 8, truncated: true });
    expect(summary.failures.map((f) => f.test)).toEqual(['t0', 't1', 't2']);
    expect(
      read(`<testsuite><testcase name="${'x'.repeat(40)}" file="${'f'.repeat(40)}"><error/></testcase></testsuite>`, {
        ...limits,
        maxTestLength: 10,
        maxFileLength: 5,
      }).failures,
    ).toEqual([{ test: 'x'.repeat(10), file: 'fffff', kind: 'error' }]);
  });

  it('refuses a DOCTYPE: no DTD is read and no entity declared or expanded (XXE, billion laughs)', () => {
    const xxe = `<?xml version="1.0"?>
<!DOCTYPE testsuite [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<testsuite><testcase name="&xxe;"><failure/></testcase></testsuite>`;
    expect(refusal(xxe)).toBe('line 2, column 1: a DOCTYPE is not accepted (no DTD, no entity declarations)');
    const laughs = `<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><testsuite name="&lol2;"/>`;
    expect(refusal(laughs)).toMatch(/DOCTYPE is not accepted/);
    // An entity that was never declared is an error, not an empty string or a lookup.
    expect(refusal('<testsuite><testcase name="&xxe;"/></testsuite>')).toMatch(/the entity &xxe; is not defined/);
  });

  it('refuses what is not well-formed, saying where', () => {
    expect(refusal('<testsuite><testcase name="a"></testsuite>')).toBe('line 1, column 31: </testsuite> closes <testcase>');
    expect(refusal('<testsuite>\n  <testcase name="a">')).toBe('the report ends inside <testcase>');
    expect(refusal('<testsuite><testcase name=a/></testsuite>')).toMatch(/attribute name: its value is not quoted/);
    expect(refusal('<testsuite><testcase name="a" name="b"/></testsuite>')).toMatch(/has attribute name twice/);
    expect(refusal('<testsuite>a & b</testsuite>')).toMatch(/& must start a reference/);
    expect(refusal('<testsuite/><testsuite/>')).toMatch(/content after the root element/);
    expect(refusal('<report/>')).toBe('line 1, column 1: the root element is <report>, not <testsuites> or <testsuite>');
    expect(refusal('not xml at all')).toMatch(/text outside the root element/);
    expect(refusal('')).toBe('the report has no root element');
    expect(refusal('<testsuite><!-- open')).toMatch(/a comment is not closed/);
    expect(refusal('<?xml version="1.0" encoding="ISO-8859-1"?><testsuite/>')).toMatch(/encoding ISO-8859-1 is not accepted/);
    expect(refusal(`${'<testsuite>'.repeat(MAX_JUNIT_DEPTH + 1)}`)).toMatch(/nest deeper than 64/);
    expect(refusal('<testsuite name="a\u0000"/>')).toMatch(/NUL character/);
  });

  it('refuses what the XML library alone would let through, and takes what only looks like markup', () => {
    expect(refusal('<testsuite/>x')).toBe('line 1, column 13: text outside the root element');
    expect(refusal('<testsuite/>\n<!-- fine -->\n<testsuite/>')).toBe('line 3, column 1: content after the root element');
    expect(refusal('<testsuite name="a<b"/>')).toMatch(/< is not allowed in an attribute value/);
    expect(refusal('<testsuite name="&constructor;"/>')).toMatch(/the entity &constructor; is not defined/);
    expect(refusal('<testsuite><testcase name="&#0;"/></testsuite>')).toMatch(/&#0; is not a character XML allows/);
    expect(refusal('<!ENTITY a "b"><testsuite/>')).toBe('line 1, column 1: markup declarations are not accepted');
    expect(refusal('<testsuite><![CDATA[ x')).toBe('line 1, column 12: a CDATA section is not closed');
    expect(refusal('<testsuite><testcase name/></testsuite>')).toBe('line 1, column 22: <testcase> attribute name has no value');
    expect(read(`${'<testsuite>'.repeat(MAX_JUNIT_DEPTH)}${'</testsuite>'.repeat(MAX_JUNIT_DEPTH)}`)).toMatchObject({ tests: 0 });
    const quoted = '<testsuite><testcase name="a"><failure><![CDATA[<!DOCTYPE html><p>&nbsp;</p>]]></failure></testcase></testsuite><!-- end --><?pi x?>';
    expect(read(quoted)).toMatchObject({ tests: 1, failed: 1, failures: [{ test: 'a', kind: 'failure' }] });
  });

  it('takes UTF-8 only', () => {
    expect(decodeJunit(Buffer.from('\ufeff<testsuite/>', 'utf8'))).toBe('<testsuite/>');
    expect(read(decodeJunit(Buffer.from('\ufeff<testsuite name="é"/>', 'utf8')))).toMatchObject({ tests: 0 });
    expect(() => decodeJunit(Buffer.from([0x3c, 0xff, 0xfe, 0x3e]))).toThrow('the report is not valid UTF-8');
    expect(() => decodeJunit(Buffer.from('\ufeff<testsuite/>', 'utf16le'))).toThrow('the report must be UTF-8, not UTF-16');
  });
});
