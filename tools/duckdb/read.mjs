#!/usr/bin/env node
// Parquet interoperability check: read ctxsim Parquet output with DuckDB and
// print one JSON summary object on stdout.
//
//   node tools/duckdb/read.mjs <glob-or-file> [more...]
//
// Output: {"files","rows","columns":[{name,type}],"sample":[<=3 rows],"metadata":{k:v}}
// where metadata is the Parquet key/value metadata of the first file (sorted by name).
// Exits 1 with a message on stderr if nothing matches or a file cannot be read.
// The bare import below resolves from this file's folder, so it works from any cwd.
import { DuckDBInstance } from '@duckdb/node-api';

const args = process.argv.slice(2);
if (args.length === 0 || args.includes('-h') || args.includes('--help')) {
  process.stderr.write('usage: node tools/duckdb/read.mjs <glob-or-file> [more...]\n');
  process.exit(2);
}

// SQL string literal; paths come from the command line, so quote them properly.
const lit = (s) => `'${String(s).replaceAll("'", "''")}'`;

const utf8 = new TextDecoder('utf-8');
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

// Make a DuckDB JS value JSON-safe: BigInt -> number (or string if too large),
// Date -> ISO string, bytes -> UTF-8 text (base64 if not valid UTF-8).
function plain(v) {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') {
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(v) : v.toString();
  }
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? null : v.toISOString();
  if (v instanceof Uint8Array) {
    try { return strictUtf8.decode(v); } catch { return 'base64:' + Buffer.from(v).toString('base64'); }
  }
  if (Array.isArray(v)) return v.map(plain);
  if (typeof v === 'object') {
    const out = {};
    for (const [k, x] of Object.entries(v)) out[k] = plain(x);
    return out;
  }
  return v;
}

async function main() {
  const instance = await DuckDBInstance.create(':memory:');
  const con = await instance.connect();
  const rows = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJS();

  // Expand each argument (a file or a glob) to concrete files, keeping argument order.
  const files = [];
  for (const arg of args) {
    const matched = (await rows(`SELECT file FROM glob(${lit(arg)}) ORDER BY file`)).map((r) => r.file);
    if (matched.length === 0) throw new Error(`no file matches ${JSON.stringify(arg)}`);
    for (const f of matched) if (!files.includes(f)) files.push(f);
  }

  const src = `read_parquet([${files.map(lit).join(', ')}], union_by_name=false)`;
  // Hash every row so that every column of every file is decoded: a bare count(*)
  // reads no column data and would miss schema mismatches and corrupt pages.
  const [{ n }] = await rows(`SELECT count(*) AS n, bit_xor(hash(t)) AS h FROM ${src} AS t`);
  const columns = (await rows(`DESCRIBE SELECT * FROM ${src}`))
    .map((r) => ({ name: r.column_name, type: r.column_type }));
  const sample = (await rows(`SELECT * FROM ${src} LIMIT 3`)).map(plain);
  const metadata = {};
  for (const r of await rows(`SELECT key, value FROM parquet_kv_metadata(${lit(files[0])})`)) {
    metadata[utf8.decode(r.key)] = r.value === null ? null : utf8.decode(r.value);
  }
  const sorted = Object.fromEntries(Object.entries(metadata).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

  con.closeSync();
  instance.closeSync();
  process.stdout.write(JSON.stringify({ files: files.length, rows: plain(n), columns, sample, metadata: sorted }) + '\n');
}

main().catch((err) => {
  process.stderr.write(`read.mjs: cannot read Parquet input: ${err?.message ?? err}\n`);
  process.exit(1);
});
