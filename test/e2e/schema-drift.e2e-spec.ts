import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getDMMF } from '@prisma/get-dmmf';
import { Client } from 'pg';

/**
 * The migrated database must be exactly what schema.prisma describes: the SQL migrations are
 * written by hand, so this is what keeps them honest.
 */
const SCALAR_TO_UDT: Record<string, string> = {
  String: 'text',
  Int: 'int4',
  BigInt: 'int8',
  Boolean: 'bool',
  DateTime: 'timestamp',
  Json: 'jsonb',
  Bytes: 'bytea',
  Float: 'float8',
};

interface DbColumn {
  table: string;
  column: string;
  udt: string;
  nullable: boolean;
  isArray: boolean;
}

describe('Migrations match schema.prisma', () => {
  const dmmf = getDMMF({ datamodel: readFileSync(join(__dirname, '../../prisma/schema.prisma'), 'utf8') });
  if ('reason' in dmmf) throw dmmf.error;
  const datamodel = dmmf.datamodel;
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  let columns: DbColumn[];
  let indexes: { table: string; unique: boolean; columns: string[]; primary: boolean }[];
  let foreignKeys: { table: string; columns: string[]; refTable: string; refColumns: string[]; onDelete: string }[];
  let enums: Record<string, string[]>;

  beforeAll(async () => {
    await client.connect();
    columns = (
      await client.query(
        `SELECT table_name AS table, column_name AS column, udt_name AS udt, is_nullable = 'YES' AS nullable, data_type = 'ARRAY' AS "isArray"
         FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'`,
      )
    ).rows;
    indexes = (
      await client.query(
        `SELECT t.relname AS table, ix.indisunique AS unique, ix.indisprimary AS primary,
                array_agg(a.attname ORDER BY k.ord)::text[] AS columns
         FROM pg_index ix
         JOIN pg_class t ON t.oid = ix.indrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = 'public'
         JOIN LATERAL unnest(ix.indkey) WITH ORDINALITY AS k(attnum, ord) ON true
         JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
         WHERE t.relname <> '_prisma_migrations'
         GROUP BY t.relname, ix.indexrelid, ix.indisunique, ix.indisprimary`,
      )
    ).rows;
    foreignKeys = (
      await client.query(
        `SELECT c.conrelid::regclass::text AS table, c.confrelid::regclass::text AS "refTable",
                (SELECT array_agg(attname ORDER BY ord)::text[] FROM unnest(c.conkey) WITH ORDINALITY AS k(n, ord) JOIN pg_attribute ON attrelid = c.conrelid AND attnum = k.n) AS columns,
                (SELECT array_agg(attname ORDER BY ord)::text[] FROM unnest(c.confkey) WITH ORDINALITY AS k(n, ord) JOIN pg_attribute ON attrelid = c.confrelid AND attnum = k.n) AS "refColumns",
                c.confdeltype AS "onDelete"
         FROM pg_constraint c WHERE c.contype = 'f'`,
      )
    ).rows.map((r) => ({ ...r, table: r.table.replace(/"/g, ''), refTable: r.refTable.replace(/"/g, '') }));
    const enumRows = (
      await client.query(
        `SELECT t.typname AS name, array_agg(e.enumlabel ORDER BY e.enumsortorder)::text[] AS values FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid GROUP BY t.typname`,
      )
    ).rows;
    enums = Object.fromEntries(enumRows.map((r) => [r.name, r.values]));
  });

  afterAll(async () => {
    await client.end();
  });

  it('has a table for every model and no other', () => {
    const tables = new Set(columns.map((c) => c.table));
    expect([...tables].sort()).toEqual(datamodel.models.map((m) => m.dbName ?? m.name).sort());
  });

  it('has every scalar field as a column of the right type and nullability, and no other column', () => {
    const expected: DbColumn[] = [];
    for (const model of datamodel.models) {
      for (const field of model.fields) {
        if (field.kind === 'object') continue;
        expected.push({
          table: model.dbName ?? model.name,
          column: field.dbName ?? field.name,
          udt: (field.isList ? '_' : '') + (field.kind === 'enum' ? field.type : SCALAR_TO_UDT[field.type]),
          nullable: !field.isRequired,
          isArray: field.isList,
        });
      }
    }
    const key = (c: DbColumn) => `${c.table}.${c.column}`;
    const sort = (list: DbColumn[]) => [...list].sort((a, b) => key(a).localeCompare(key(b)));
    expect(sort(columns)).toEqual(sort(expected));
  });

  it('has every enum with its values in order', () => {
    expect(enums).toEqual(Object.fromEntries(datamodel.enums.map((e) => [e.dbName ?? e.name, e.values.map((v) => v.dbName ?? v.name)])));
  });

  it('has every @id, @unique, @@unique and @@index', () => {
    const actual = indexes.map((i) => `${i.table}(${i.columns.join(',')})${i.primary ? ' pk' : i.unique ? ' unique' : ''}`).sort();
    const expected = datamodel.indexes
      .map((i) => `${i.model}(${i.fields.map((f) => f.name).join(',')})${i.type === 'id' ? ' pk' : i.type === 'unique' ? ' unique' : ''}`)
      .sort();
    expect(actual).toEqual(expected);
  });

  it('has every @relation as a foreign key with its onDelete rule', () => {
    const ON_DELETE: Record<string, string> = { Cascade: 'c', SetNull: 'n', Restrict: 'r', NoAction: 'a' };
    const expected: string[] = [];
    for (const model of datamodel.models) {
      for (const field of model.fields) {
        if (field.kind !== 'object' || !field.relationFromFields?.length) continue;
        const onDelete = ON_DELETE[field.relationOnDelete ?? (field.isRequired ? 'Restrict' : 'SetNull')];
        expected.push(`${model.name}(${field.relationFromFields.join(',')}) -> ${field.type}(${field.relationToFields!.join(',')}) ${onDelete}`);
      }
    }
    const actual = foreignKeys.map((f) => `${f.table}(${f.columns.join(',')}) -> ${f.refTable}(${f.refColumns.join(',')}) ${f.onDelete}`);
    expect(actual.sort()).toEqual(expected.sort());
  });
});
