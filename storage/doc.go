// Package storage is where the jobs read and write files, with no Beam in
// it: local paths and gs:// behind one FS interface, whole directories
// moved between them (Fetch, Publish), and the sharded Parquet tables every
// job writes.
//
// A table is a directory of files dir/part-SSSSS-of-NNNNN.parquet plus
// dir/_manifest.json listing the files with their row counts, sizes and
// CRC-32C checksums, and the ID of the run that wrote them (also in each
// file's metadata). Each file is written under a temporary name and renamed
// when complete (TableSpec.WriteShard); the manifest is written last, and
// only when every shard that was sent rows reported exactly that many rows
// written (TableSpec.Commit): a lost shard fails the run instead of becoming
// an empty file. A rerun overwrites the same names and removes files of
// earlier runs that it did not write, so the directory never holds partial
// or duplicate data once the job succeeds. A failed run (Abandon) commits
// nothing more, and RemoveRunManifests withdraws what it had committed.
//
// Readers (Glob, ReadRows, ScanFile, ScanTable, ReadTable) open a table
// through its manifest: a listed file that is missing, a part file that is
// not listed, a file whose size, checksum, row count or run ID differs from
// the manifest, and part files with no manifest at all (an interrupted run)
// are errors naming the file. transforms/parquetio adapts all of this to
// Beam.
//
// Storage that does not answer fails a call instead of stalling it: each
// call to gs:// is retried a few times at most and waits for an answer for
// at most $CTXSIM_STORAGE_TIMEOUT (default 60s), and a job's cleanup after
// a failure for at most $CTXSIM_STORAGE_CLEANUP_TIMEOUT (default 180s) in
// all; the error names the operation, the object and the endpoint (see
// TimeoutEnv).
package storage
