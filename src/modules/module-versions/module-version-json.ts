/**
 * The version lists' rows rendered as the DTOs' JSON text straight from Postgres' text output: the
 * repository reads every column as the text Postgres sends (no type parsing, no row mapping, no
 * Date), and these functions write exactly the bytes `JSON.stringify` gives for the DTO built by
 * `toModuleVersionDto` (keys in the DTO classes' order, createdById, organizationId and
 * versionPrereleaseRank absent when null). Pure: no Nest, Prisma or I/O.
 */

import { utcTimestamp } from '@/common/prisma/utc-timestamp';

/** A list row as Postgres sends it in text: every column a string, NULL as null. */
export interface ModuleVersionTextRow {
  id: string;
  moduleDefinitionId: string;
  organizationId: string | null;
  version: string;
  description: string;
  /** An `integer` column: its text is the canonical decimal JSON writes for the number. */
  versionMajor: string;
  versionMinor: string;
  versionPatch: string;
  versionPrereleaseSortKey: string;
  versionPrereleaseRank: string | null;
  createdById: string | null;
  /** A UTC `timestamp(3)` in Postgres' ISO DateStyle: `2026-11-28 03:20:15.12` (trailing zeros of the fraction dropped). */
  createdAt: string;
  updatedAt: string;
  /** The `jsonb` text (spaced, Postgres' key order); present in the full list only. */
  config?: string;
}

const ISO_DATESTYLE = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d{1,6})?$/;

/**
 * A `timestamp(3)` column's text as `Date.toISOString()` writes the instant (these columns hold
 * UTC): `2026-11-28 03:20:15.12` is `2026-11-28T03:20:15.120Z`. The session's DateStyle must be
 * ISO, Postgres' default, which Prisma's own reads of timestamps assume too. A text of another
 * shape (a year past 9999 or BC, written to the table by hand) goes through Date, as Prisma would
 * read it, and is sent as Postgres wrote it when Date cannot hold it: one odd row never fails a page.
 */
export function isoInstant(text: string): string {
  if (!ISO_DATESTYLE.test(text)) {
    const date = utcTimestamp(text);
    return Number.isNaN(date.getTime()) ? text : date.toISOString();
  }
  const fraction = text.length > 20 ? `${text.slice(20, 23)}00`.slice(0, 3) : '000';
  return `${text.slice(0, 10)}T${text.slice(11, 19)}.${fraction}Z`;
}

const str = JSON.stringify;

/** The fields both DTOs share (ModuleVersionFields), as an object's JSON text without its closing brace. */
function common(row: ModuleVersionTextRow): string {
  let json = `{"id":${str(row.id)},"moduleDefinitionId":${str(row.moduleDefinitionId)},"version":${str(row.version)},"description":${str(row.description)},"createdAt":"${isoInstant(row.createdAt)}","updatedAt":"${isoInstant(row.updatedAt)}"`;
  if (row.createdById !== null) json += `,"createdById":${str(row.createdById)}`;
  if (row.organizationId !== null) json += `,"organizationId":${str(row.organizationId)}`;
  return json;
}

/** ModuleVersionSummaryDto's JSON text. */
export function summaryJson(row: ModuleVersionTextRow): string {
  const rank = row.versionPrereleaseRank === null ? '' : `,"versionPrereleaseRank":${row.versionPrereleaseRank}`;
  return `${common(row)},"versionMajor":${row.versionMajor},"versionMinor":${row.versionMinor},"versionPatch":${row.versionPatch},"versionPrereleaseSortKey":${str(row.versionPrereleaseSortKey)}${rank}}`;
}

/** ModuleVersionDto's JSON text: `config` as JSON.stringify writes the parsed jsonb (not Postgres' spaced text). */
export function versionJson(row: ModuleVersionTextRow): string {
  return `${common(row)},"config":${str(JSON.parse(row.config ?? '{}'))}}`;
}
