/*
 * JUnit XML reports (issue 40: failing tests in), read with fast-xml-parser (its validator says
 * where a body is not well-formed; its parser gives the tree). Around it, what the library does not
 * promise: a DOCTYPE (or any other markup declaration) is refused before the library sees the body,
 * so no DTD is read, no entity is declared or expanded and nothing outside the body is ever fetched
 * (no XXE, no "billion laughs"); references are decoded here, only XML's five predefined entities
 * and character references; UTF-8 only; unclosed comments, CDATA sections and processing
 * instructions, a NUL, `<` in an attribute value, text or a second element outside the root are
 * refused; elements nest at most MAX_JUNIT_DEPTH deep. Plain code: no I/O, no framework.
 *
 * What a report says: every <testcase> under the root <testsuites> or <testsuite> (at any depth of
 * nested suites) is a test; one holding a <failure> or an <error> failed (its kind is that element's
 * name), one holding <skipped> did not run. The failing test is `classname.name` (or `name` alone),
 * its `file` attribute its file.
 */

import { XMLParser, XMLValidator } from 'fast-xml-parser';

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

const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
/** The key of a node's position in the body (`captureMetaData`); typed `Symbol` by the library, a symbol at run time. */
const META = XMLParser.getMetaDataSymbol() as unknown as symbol;

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
export function readJunit(report: string, limits: JunitLimits): JunitSummary {
  const xml = report.charCodeAt(0) === 0xfeff ? report.slice(1) : report;
  refuseDeclarations(xml);
  let tree: XmlNode[] | undefined;
  let parseError: unknown;
  try {
    tree = newParser().parse(xml) as XmlNode[];
  } catch (error) {
    if (error instanceof Error && /maximum nested tags/i.test(error.message)) throw new JunitError(`elements nest deeper than ${MAX_JUNIT_DEPTH} levels`);
    parseError = error;
  }
  const valid = XMLValidator.validate(xml, { allowBooleanAttributes: false });
  if (valid !== true) throw validatorError(xml, valid.err);
  if (parseError instanceof JunitError) throw parseError;
  if (parseError !== undefined || tree === undefined) throw new JunitError(`not well-formed XML (${String((parseError as Error)?.message).slice(0, 200)})`);
  return summarize(xml, tree, limits);
}

/** A node of fast-xml-parser's `preserveOrder` tree: `{ [tag]: children, ':@': attributes }` or `{ '#text': text }`. */
type XmlNode = Record<string, unknown> & { ':@'?: Record<string, string> };

/** Where a node starts and (exclusive) ends in the body. */
function where(node: XmlNode): { startIndex?: number; endIndex?: number } {
  return (node as unknown as Record<symbol, { startIndex?: number; endIndex?: number } | undefined>)[META] ?? {};
}

function newParser(): XMLParser {
  return new XMLParser({
    preserveOrder: true,
    ignoreAttributes: false,
    attributeNamePrefix: '',
    allowBooleanAttributes: false,
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: false,
    ignoreDeclaration: true,
    ignorePiTags: true,
    captureMetaData: true,
    // Its depth counts from under the root: this refuses exactly what nests deeper than MAX_JUNIT_DEPTH.
    maxNestedTags: MAX_JUNIT_DEPTH - 1,
    processEntities: true,
    htmlEntities: false,
    entityDecoder: {
      // A DOCTYPE never reaches the parser; should one ever declare entities, they are refused, not added.
      addInputEntities: (entities) => {
        if (Object.keys(entities).length > 0) throw new JunitError('a DOCTYPE is not accepted (no DTD, no entity declarations)');
      },
      setExternalEntities: () => undefined,
      reset: () => undefined,
      setXmlVersion: () => undefined,
      decode: unescape,
    },
  });
}

/** Attribute values and text as written: `<` is refused, `&` must start one of the five predefined entities or a character reference. */
function unescape(raw: string): string {
  if (raw.includes('<')) throw new JunitError('< is not allowed in an attribute value');
  if (!raw.includes('&')) return raw;
  return raw.replace(/&([^;&\s]{0,12});?/g, (whole, ref: string) => {
    if (!whole.endsWith(';')) throw new JunitError(`& must start a reference ending in ; (${whole.slice(0, 12)})`);
    if (Object.hasOwn(PREDEFINED, ref)) return PREDEFINED[ref];
    const code = /^#x[0-9a-fA-F]{1,6}$/.test(ref) ? parseInt(ref.slice(2), 16) : /^#[0-9]{1,7}$/.test(ref) ? parseInt(ref.slice(1), 10) : undefined;
    if (code === undefined)
      throw new JunitError(`the entity &${ref.slice(0, 12)}; is not defined (only &lt; &gt; &amp; &quot; &apos; and character references)`);
    if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) throw new JunitError(`&${ref}; is not a character XML allows`);
    return String.fromCodePoint(code);
  });
}

/**
 * Before any parsing: no NUL, no DOCTYPE or other markup declaration, every comment, CDATA section
 * and processing instruction closed (the library's validator lets them run to the end), and an XML
 * declaration naming an encoding names UTF-8. Comments and CDATA sections are skipped, so a
 * `<!DOCTYPE html>` quoted inside a failure's CDATA is text, not a declaration.
 */
function refuseDeclarations(xml: string): void {
  const nul = xml.indexOf('\u0000');
  if (nul !== -1) throw errorAt(xml, 'the NUL character is not allowed in XML', nul);
  const through = (at: number, open: string, close: string, what: string): number => {
    const end = xml.indexOf(close, at + open.length);
    if (end === -1) throw errorAt(xml, `${what} is not closed`, at);
    return end + close.length - 1;
  };
  for (let at = xml.indexOf('<'); at !== -1; at = xml.indexOf('<', at + 1)) {
    if (xml.startsWith('<!--', at)) at = through(at, '<!--', '-->', 'a comment');
    else if (xml.startsWith('<![CDATA[', at)) at = through(at, '<![CDATA[', ']]>', 'a CDATA section');
    else if (xml.startsWith('<!', at))
      throw errorAt(
        xml,
        /^<!DOCTYPE/i.test(xml.slice(at, at + 9)) ? 'a DOCTYPE is not accepted (no DTD, no entity declarations)' : 'markup declarations are not accepted',
        at,
      );
    else if (xml.startsWith('<?', at)) {
      const end = through(at, '<?', '?>', 'a processing instruction');
      const encoding = /^<\?xml\s[^]*?encoding\s*=\s*["']([^"']+)["']/.exec(xml.slice(at, end))?.[1];
      if (encoding && !/^(utf-?8|us-ascii)$/i.test(encoding)) throw errorAt(xml, `the encoding ${encoding.slice(0, 40)} is not accepted (UTF-8 only)`, at);
      at = end;
    }
  }
}

/** The validator's finding in this reader's words (its own words when there is no better). */
function validatorError(xml: string, err: { code: string; msg: string; line: number; col?: number }): JunitError {
  const at = (message: string) => new JunitError(message, err.line, err.col ?? 1);
  const tagAt = () => {
    const offset = offsetOf(xml, err.line, err.col ?? 1);
    return /<([^\s/>]+)[^<]*$/.exec(xml.slice(0, offset))?.[1] ?? 'an element';
  };
  let m: RegExpExecArray | null;
  if ((m = /^Expected closing tag '(.*)' \(opened in .*\) instead of closing tag '(.*)'\.$/.exec(err.msg))) return at(`</${m[2]}> closes <${m[1]}>`);
  if ((m = /^Closing tag '(.*)' has not been opened\.$/.exec(err.msg))) return at(`</${m[1]}> closes nothing`);
  if ((m = /^Unclosed tag '(.*)'\.$/.exec(err.msg))) return new JunitError(`the report ends inside <${m[1]}>`);
  if ((m = /^Invalid '(\[.*\])' found\.$/.exec(err.msg))) {
    const open = JSON.parse(m[1]) as string[];
    return new JunitError(`the report ends inside <${open[open.length - 1]}>`);
  }
  if (err.msg === 'Start tag expected.') return new JunitError('the report has no root element');
  if (err.msg === "char '&' is not expected.") return at('& must start a reference ending in ;');
  if (/^char '.*' is not expected\.$/.test(err.msg) || err.msg === 'Extra text at the end') return at('text outside the root element');
  if (err.msg === 'Multiple possible root nodes found.') return at('content after the root element');
  if ((m = /^Attribute '(.*)' is repeated\.$/.exec(err.msg))) return at(`<${tagAt()}> has attribute ${m[1]} twice`);
  if ((m = /^Attribute '(.*)' is without value\.$/.exec(err.msg))) return at(`<${tagAt()}> attribute ${m[1]}: its value is not quoted`);
  if ((m = /^boolean attribute '(.*)' is not allowed\.$/.exec(err.msg))) return at(`<${tagAt()}> attribute ${m[1]} has no value`);
  return at(err.msg);
}

/** What the tree holds: one root element <testsuites> or <testsuite>, then every <testcase> under it. */
function summarize(xml: string, tree: XmlNode[], limits: JunitLimits): JunitSummary {
  const summary: JunitSummary = { tests: 0, skipped: 0, failed: 0, failures: [], truncated: false };
  let root: string | undefined;
  for (const node of tree) {
    const name = tagOf(node);
    if (name === '#text') {
      if (String(node['#text']).trim() !== '') throw errorAt(xml, 'text outside the root element', where(node).startIndex);
      continue;
    }
    if (root !== undefined) throw errorAt(xml, 'content after the root element', where(node).startIndex);
    if (name !== 'testsuites' && name !== 'testsuite')
      throw errorAt(xml, `the root element is <${name}>, not <testsuites> or <testsuite>`, where(node).startIndex);
    root = name;
    visit(node, 1);
    refuseAfterRoot(xml, where(node).endIndex);
  }
  if (root === undefined) throw new JunitError('the report has no root element');
  return summary;

  function visit(node: XmlNode, depth: number): void {
    if (depth > MAX_JUNIT_DEPTH) throw new JunitError(`elements nest deeper than ${MAX_JUNIT_DEPTH} levels`);
    const children = elements(node);
    if (tagOf(node) !== 'testcase') {
      for (const child of children) visit(child, depth + 1);
      return;
    }
    // A test case: its own <failure>/<error>/<skipped> children count; anything deeper is its content.
    const attrs = node[':@'] ?? {};
    const caseName = attrs.name ?? '';
    const classname = attrs.classname ?? '';
    const test = (classname && caseName ? `${classname}.${caseName}` : caseName || classname || '(unnamed test case)').slice(0, limits.maxTestLength);
    const file = attrs.file?.slice(0, limits.maxFileLength);
    const kind = children.map(tagOf).find((n): n is 'failure' | 'error' => n === 'failure' || n === 'error');
    summary.tests++;
    if (kind) {
      summary.failed++;
      if (summary.failures.length < limits.maxFailures) summary.failures.push({ test, ...(file && { file }), kind });
      else summary.truncated = true;
    } else if (children.some((c) => tagOf(c) === 'skipped')) summary.skipped++;
  }
}

/** After the root element only spaces, comments and processing instructions (the parser drops text after a self-closing root). */
function refuseAfterRoot(xml: string, end: number | undefined): void {
  if (end === undefined) return;
  const skip = /\s+|<!--[^]*?-->|<\?[^]*?\?>/y;
  let at = end;
  for (skip.lastIndex = at; at < xml.length && skip.exec(xml); skip.lastIndex = at) at = skip.lastIndex;
  if (at < xml.length) throw errorAt(xml, xml[at] === '<' ? 'content after the root element' : 'text outside the root element', at);
}

function tagOf(node: XmlNode): string {
  return Object.keys(node).find((key) => key !== ':@') ?? '#text';
}

function elements(node: XmlNode): XmlNode[] {
  const children = node[tagOf(node)];
  return Array.isArray(children) ? (children as XmlNode[]).filter((c) => tagOf(c) !== '#text') : [];
}

function offsetOf(xml: string, line: number, column: number): number {
  let offset = 0;
  for (let l = 1; l < line; l++) offset = xml.indexOf('\n', offset) + 1;
  return offset + column - 1;
}

function errorAt(xml: string, message: string, at: number | undefined): JunitError {
  if (at === undefined) return new JunitError(message);
  let line = 1;
  let lineStart = 0;
  for (let i = xml.indexOf('\n'); i !== -1 && i < at; i = xml.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return new JunitError(message, line, at - lineStart + 1);
}
