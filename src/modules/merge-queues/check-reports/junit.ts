/*
 * JUnit XML reports (issue 40: failing tests in), read without any XML library: a strict reader of
 * the XML subset test runners write (elements, attributes, text, CDATA, comments, processing
 * instructions, the five predefined entities and character references). A DOCTYPE is refused
 * outright, so no DTD is read, no entity is declared or expanded and nothing outside the body is
 * ever fetched (no XXE, no "billion laughs"). Plain code: no I/O, no framework.
 *
 * What a report says: every <testcase> under the root <testsuites> or <testsuite> (at any depth of
 * nested suites) is a test; one holding a <failure> or an <error> failed (its kind is that element's
 * name), one holding <skipped> did not run. The failing test is `classname.name` (or `name` alone),
 * its `file` attribute its file.
 */

/** Elements nested deeper than this are refused (test reports nest a few levels). */
export const MAX_JUNIT_DEPTH = 64;

export interface JunitFailure {
  test: string;
  file?: string;
  kind: 'failure' | 'error';
}

export interface JunitSummary {
  /** Test cases in the report. */
  tests: number;
  /** Test cases skipped (holding <skipped>, and no failure or error). */
  skipped: number;
  /** Test cases that failed or errored. */
  failed: number;
  /** The first `maxFailures` of them, in document order. */
  failures: JunitFailure[];
  /** More failed than `failures` lists. */
  truncated: boolean;
}

/** Why a body is not a JUnit report this reader takes, with where (1-based line and column) when it is about one place. */
export class JunitError extends Error {
  constructor(
    message: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    super(line === undefined ? message : `line ${line}, column ${column}: ${message}`);
  }
}

export interface JunitLimits {
  maxFailures: number;
  maxTestLength: number;
  maxFileLength: number;
}

const NAME_START = /[A-Za-z_:\u00C0-\uFFFF]/;
const NAME = /[A-Za-z0-9_:.\-\u00B7\u00C0-\uFFFF]*/y;
const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** The body as text: UTF-8 only (a UTF-8 byte order mark is dropped; UTF-16 and bytes that are not UTF-8 are refused). */
export function decodeJunit(bytes: Uint8Array): string {
  if ((bytes[0] === 0xfe && bytes[1] === 0xff) || (bytes[0] === 0xff && bytes[1] === 0xfe)) throw new JunitError('the report must be UTF-8, not UTF-16');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new JunitError('the report is not valid UTF-8');
  }
  return text;
}

/** Reads a JUnit XML report; a JunitError says why it is not one. */
export function readJunit(xml: string, limits: JunitLimits): JunitSummary {
  const reader = new Reader(xml);
  const summary: JunitSummary = { tests: 0, skipped: 0, failed: 0, failures: [], truncated: false };
  /** Open elements, outermost first. */
  const stack: string[] = [];
  let root: string | undefined;
  let testcase: { test: string; file?: string; failed?: 'failure' | 'error'; skipped: boolean; depth: number } | undefined;
  let rootClosed = false;

  const open = (name: string, attrs: Map<string, string>, at: number) => {
    if (rootClosed) throw reader.error('content after the root element', at);
    if (stack.length === 0) {
      if (name !== 'testsuites' && name !== 'testsuite') throw reader.error(`the root element is <${name}>, not <testsuites> or <testsuite>`, at);
      root = name;
    }
    if (stack.length >= MAX_JUNIT_DEPTH) throw reader.error(`elements nest deeper than ${MAX_JUNIT_DEPTH} levels`, at);
    stack.push(name);
    if (name === 'testcase' && testcase === undefined) {
      const caseName = attrs.get('name') ?? '';
      const classname = attrs.get('classname') ?? '';
      const test = (classname && caseName ? `${classname}.${caseName}` : caseName || classname || '(unnamed test case)').slice(0, limits.maxTestLength);
      const file = attrs.get('file')?.slice(0, limits.maxFileLength);
      testcase = { test, ...(file && { file }), skipped: false, depth: stack.length };
    } else if (testcase && stack.length === testcase.depth + 1) {
      if ((name === 'failure' || name === 'error') && testcase.failed === undefined) testcase.failed = name;
      if (name === 'skipped') testcase.skipped = true;
    }
  };
  const close = (name: string, at: number) => {
    const top = stack.pop();
    if (top === undefined) throw reader.error(`</${name}> closes nothing`, at);
    if (top !== name) throw reader.error(`</${name}> closes <${top}>`, at);
    if (testcase && stack.length + 1 === testcase.depth) {
      summary.tests++;
      if (testcase.failed) {
        summary.failed++;
        if (summary.failures.length < limits.maxFailures)
          summary.failures.push({ test: testcase.test, ...(testcase.file && { file: testcase.file }), kind: testcase.failed });
        else summary.truncated = true;
      } else if (testcase.skipped) summary.skipped++;
      testcase = undefined;
    }
    if (stack.length === 0) rootClosed = true;
  };

  reader.skipBom();
  while (!reader.done()) {
    const at = reader.pos;
    if (reader.startsWith('<?')) {
      reader.processingInstruction(at);
    } else if (reader.startsWith('<!--')) {
      reader.comment(at);
    } else if (reader.startsWith('<![CDATA[')) {
      if (stack.length === 0) throw reader.error('CDATA outside the root element', at);
      reader.cdata(at);
    } else if (reader.startsWith('<!')) {
      throw reader.error(
        reader.startsWith('<!DOCTYPE') ? 'a DOCTYPE is not accepted (no DTD, no entity declarations)' : 'markup declarations are not accepted',
        at,
      );
    } else if (reader.startsWith('</')) {
      close(reader.closeTag(at), at);
    } else if (reader.startsWith('<')) {
      const { name, attrs, empty } = reader.openTag(at);
      open(name, attrs, at);
      if (empty) close(name, at);
    } else {
      const text = reader.text();
      if (stack.length === 0 && text.trim() !== '') throw reader.error('text outside the root element', at);
    }
  }
  if (stack.length > 0) throw new JunitError(`the report ends inside <${stack[stack.length - 1]}>`);
  if (root === undefined) throw new JunitError('the report has no root element');
  return summary;
}

class Reader {
  pos = 0;
  constructor(private readonly xml: string) {
    if (xml.includes('\u0000')) throw this.error('the NUL character is not allowed in XML', xml.indexOf('\u0000'));
  }

  done(): boolean {
    return this.pos >= this.xml.length;
  }

  startsWith(s: string): boolean {
    return this.xml.startsWith(s, this.pos);
  }

  skipBom(): void {
    if (this.xml.charCodeAt(0) === 0xfeff) this.pos = 1;
  }

  error(message: string, at = this.pos): JunitError {
    let line = 1;
    let lineStart = 0;
    for (let i = this.xml.indexOf('\n'); i !== -1 && i < at; i = this.xml.indexOf('\n', i + 1)) {
      line++;
      lineStart = i + 1;
    }
    return new JunitError(message, line, at - lineStart + 1);
  }

  private until(end: string, what: string, at: number): string {
    const i = this.xml.indexOf(end, this.pos);
    if (i === -1) throw this.error(`${what} is not closed`, at);
    const body = this.xml.slice(this.pos, i);
    this.pos = i + end.length;
    return body;
  }

  processingInstruction(at: number): void {
    this.pos += 2;
    const body = this.until('?>', 'a processing instruction', at);
    const encoding = /^xml\s[^]*?encoding\s*=\s*["']([^"']+)["']/.exec(body)?.[1];
    if (encoding && !/^(utf-?8|us-ascii)$/i.test(encoding)) throw this.error(`the encoding ${encoding.slice(0, 40)} is not accepted (UTF-8 only)`, at);
  }

  comment(at: number): void {
    this.pos += 4;
    this.until('-->', 'a comment', at);
  }

  cdata(at: number): void {
    this.pos += 9;
    this.until(']]>', 'a CDATA section', at);
  }

  private name(what: string): string {
    const first = this.xml[this.pos];
    if (first === undefined || !NAME_START.test(first)) throw this.error(`${what} has no name`);
    NAME.lastIndex = this.pos + 1;
    const rest = NAME.exec(this.xml)?.[0] ?? '';
    const name = first + rest;
    this.pos += name.length;
    return name;
  }

  private spaces(): boolean {
    const start = this.pos;
    while (/[ \t\r\n]/.test(this.xml[this.pos] ?? '')) this.pos++;
    return this.pos > start;
  }

  closeTag(at: number): string {
    this.pos += 2;
    const name = this.name('a closing tag');
    this.spaces();
    if (this.xml[this.pos] !== '>') throw this.error(`</${name}> is not closed with >`, at);
    this.pos++;
    return name;
  }

  openTag(at: number): { name: string; attrs: Map<string, string>; empty: boolean } {
    this.pos += 1;
    const name = this.name('a tag');
    const attrs = new Map<string, string>();
    for (;;) {
      const spaced = this.spaces();
      const c = this.xml[this.pos];
      if (c === undefined) throw this.error(`<${name}> is not closed`, at);
      if (c === '>') {
        this.pos++;
        return { name, attrs, empty: false };
      }
      if (c === '/' && this.xml[this.pos + 1] === '>') {
        this.pos += 2;
        return { name, attrs, empty: true };
      }
      if (!spaced) throw this.error(`<${name}>: attributes are separated by spaces`);
      const attrAt = this.pos;
      const attr = this.name(`an attribute of <${name}>`);
      this.spaces();
      if (this.xml[this.pos] !== '=') throw this.error(`<${name}> attribute ${attr} has no value`, attrAt);
      this.pos++;
      this.spaces();
      const quote = this.xml[this.pos];
      if (quote !== '"' && quote !== "'") throw this.error(`<${name}> attribute ${attr}: its value is not quoted`, attrAt);
      this.pos++;
      const raw = this.until(quote, `<${name}> attribute ${attr}`, attrAt);
      if (raw.includes('<')) throw this.error(`<${name}> attribute ${attr}: < is not allowed in a value`, attrAt);
      if (attrs.has(attr)) throw this.error(`<${name}> has attribute ${attr} twice`, attrAt);
      attrs.set(attr, this.unescape(raw, attrAt));
    }
  }

  /** Character data up to the next markup, its references checked (the text itself is not kept). */
  text(): string {
    const at = this.pos;
    const next = this.xml.indexOf('<', this.pos);
    const end = next === -1 ? this.xml.length : next;
    const raw = this.xml.slice(this.pos, end);
    this.pos = end;
    return this.unescape(raw, at);
  }

  private unescape(raw: string, at: number): string {
    if (!raw.includes('&')) return raw;
    return raw.replace(/&([^;&\s]{0,12});?/g, (whole, ref: string) => {
      if (!whole.endsWith(';')) throw this.error(`& must start a reference ending in ; (${whole.slice(0, 12)})`, at);
      if (ref in PREDEFINED) return PREDEFINED[ref];
      const code = /^#x[0-9a-fA-F]{1,6}$/.test(ref) ? parseInt(ref.slice(2), 16) : /^#[0-9]{1,7}$/.test(ref) ? parseInt(ref.slice(1), 10) : undefined;
      if (code === undefined)
        throw this.error(`the entity &${ref.slice(0, 12)}; is not defined (only &lt; &gt; &amp; &quot; &apos; and character references)`, at);
      if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) throw this.error(`&${ref}; is not a character XML allows`, at);
      return String.fromCodePoint(code);
    });
  }
}
