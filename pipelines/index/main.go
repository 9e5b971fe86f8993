// Command index reads a corpus and builds the sharded chunk index plus the
// sentence, chunk and dead-letter Parquet tables; see package indexjob.
//
//	go run ./pipelines/index --input='corpus/*.jsonl.gz' --output=out/corpus
package main

import (
	"context"
	"flag"

	"github.com/ctxsim/ctxsim/pipelines/internal/beamjob"
	"github.com/ctxsim/ctxsim/pipelines/internal/indexjob"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/transforms/progress"
)

func main() {
	var cfg indexjob.Config
	cfg.Register(flag.CommandLine)
	beamjob.Init(indexjob.Usage)
	jobrun.Require("input", "output")
	jobrun.CheckRanges(indexjob.Ranges()...)
	if err := jobrun.CheckOutput(context.Background(), "index", cfg.Output, "sentences", "chunks", "dead_letters", "index"); err != nil {
		jobrun.Fail(err)
	}
	jobrun.Lease("index", cfg.Output)
	defer jobrun.Release()
	// A progress line whenever none has been printed for a while, also in
	// the phases outside Beam pipelines (beamjob.Run has its own, with counters).
	defer progress.Heartbeat("index", nil)()
	if err := indexjob.Run(context.Background(), cfg); err != nil {
		jobrun.Fail(err)
	}
}
