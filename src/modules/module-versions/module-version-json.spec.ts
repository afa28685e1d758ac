import fc from 'fast-check';
import { type ModuleVersionRow, toModuleVersionDto } from './dto/module-version.dto';
import { isoInstant, type ModuleVersionTextRow, summaryJson, versionJson } from './module-version-json';

/** A UTC instant as Postgres writes a `timestamp(3)` in the ISO DateStyle: the fraction's trailing zeros dropped, no fraction when it is zero. */
function postgresText(date: Date): string {
  const [day, time] = date.toISOString().slice(0, -1).split('T');
  return `${day} ${time.replace(/\.?0+$/, '')}`;
}

/** The text row Postgres sends for `row`. */
function asText(row: ModuleVersionRow): ModuleVersionTextRow {
  return {
    ...row,
    versionMajor: String(row.versionMajor),
    versionMinor: String(row.versionMinor),
    versionPatch: String(row.versionPatch),
    versionPrereleaseRank: row.versionPrereleaseRank === null ? null : String(row.versionPrereleaseRank),
    createdAt: postgresText(row.createdAt),
    updatedAt: postgresText(row.updatedAt),
    // Spaced, as jsonb's text is, which the JSON must not keep.
    config: JSON.stringify(row.config, null, 1).replace(/\n\s*/g, ' '),
  };
}

/** The summary as the API built it in Node before: the DTO's common fields, then the order columns. */
function summaryDto(row: ModuleVersionRow): unknown {
  const { config: _config, ...fields } = toModuleVersionDto(row);
  return {
    ...fields,
    versionMajor: row.versionMajor,
    versionMinor: row.versionMinor,
    versionPatch: row.versionPatch,
    versionPrereleaseSortKey: row.versionPrereleaseSortKey,
    ...(row.versionPrereleaseRank === null ? {} : { versionPrereleaseRank: row.versionPrereleaseRank }),
  };
}

const instant = fc.oneof(
  fc.date({ min: new Date('1970-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }),
  // Milliseconds ending in zeros, which Postgres' text drops.
  fc.integer({ min: 0, max: 4_000_000_000 }).chain((s) => fc.constantFrom(0, 100, 120, 7, 70).map((ms) => new Date(s * 1000 + ms))),
);
const text = fc.string({ unit: 'binary', maxLength: 40 });
const row: fc.Arbitrary<ModuleVersionRow> = fc.record({
  id: text,
  moduleDefinitionId: text,
  organizationId: fc.option(text, { nil: null }),
  version: text,
  description: text,
  config: fc.dictionary(text, fc.jsonValue({ maxDepth: 2 })),
  versionMajor: fc.nat(),
  versionMinor: fc.nat(),
  versionPatch: fc.nat(),
  versionPrereleaseSortKey: text,
  versionPrereleaseRank: fc.option(fc.integer({ min: 1, max: 64 }), { nil: null }),
  createdById: fc.option(text, { nil: null }),
  createdAt: instant,
  updatedAt: instant,
});

describe('module-version-json', () => {
  it('writes an instant from Postgres text as toISOString does, whatever zeros the fraction ends in', () => {
    expect(isoInstant('2026-11-28 03:20:15')).toBe('2026-11-28T03:20:15.000Z');
    expect(isoInstant('2026-11-28 03:20:15.1')).toBe('2026-11-28T03:20:15.100Z');
    expect(isoInstant('2026-11-28 03:20:15.12')).toBe('2026-11-28T03:20:15.120Z');
    expect(isoInstant('2026-11-28 03:20:15.123')).toBe('2026-11-28T03:20:15.123Z');
    fc.assert(fc.property(instant, (date) => isoInstant(postgresText(date)) === date.toISOString()));
  });

  it('never throws on a timestamp text of another shape: through Date when it can hold it, else as Postgres wrote it', () => {
    expect(isoInstant('2026-11-28T03:20:15.5')).toBe('2026-11-28T03:20:15.500Z');
    expect(isoInstant('0044-03-15 12:00:00 BC')).toBe('0044-03-15 12:00:00 BC');
    expect(isoInstant('10000-01-01 00:00:00')).toBe('10000-01-01 00:00:00');
  });

  it('writes exactly the bytes JSON.stringify gives for each DTO, for any row', () => {
    fc.assert(
      fc.property(row, (r) => {
        expect(summaryJson(asText(r))).toBe(JSON.stringify(summaryDto(r)));
        expect(versionJson(asText(r))).toBe(JSON.stringify(toModuleVersionDto(r)));
      }),
      { numRuns: 2_000 },
    );
  });

  it('leaves out createdById, organizationId and versionPrereleaseRank when they are null', () => {
    const r = asText({
      id: 'v',
      moduleDefinitionId: 'd',
      organizationId: null,
      version: '1.0.0',
      description: '',
      config: {},
      versionMajor: 1,
      versionMinor: 0,
      versionPatch: 0,
      versionPrereleaseSortKey: '~',
      versionPrereleaseRank: null,
      createdById: null,
      createdAt: new Date(0),
      updatedAt: new Date(0),
    });
    expect(JSON.parse(summaryJson(r))).not.toHaveProperty('createdById');
    expect(Object.keys(JSON.parse(summaryJson(r)))).toEqual([
      'id',
      'moduleDefinitionId',
      'version',
      'description',
      'createdAt',
      'updatedAt',
      'versionMajor',
      'versionMinor',
      'versionPatch',
      'versionPrereleaseSortKey',
    ]);
  });
});
