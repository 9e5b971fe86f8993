// Command encode stores the sentence vectors of a corpus under the models
// that cache them, for harvest workers to load; see package encodejob.
//
//	go run ./pipelines/encode --corpus=out/corpus --model=out/model
package main

import (
	"context"
	"flag"

	"github.com/ctxsim/ctxsim/pipelines/internal/beamjob"
	"github.com/ctxsim/ctxsim/pipelines/internal/encodejob"
	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/transforms/progress"
)

func main() {
	var cfg encodejob.Config
	cfg.Register(flag.CommandLine)
	beamjob.Init(encodejob.Usage)
	jobrun.CheckRanges(encodejob.Ranges()...)
	if err := cfg.Resolve(); err != nil {
		jobrun.Fail(err)
	}
	jobrun.Lease("encode", cfg.Output)
	defer jobrun.Release()
	// A progress line whenever none has been printed for a while, also in
	// the phases outside Beam pipelines (beamjob.Run has its own, with counters).
	defer progress.Heartbeat("encode", nil)()
	if err := encodejob.Run(context.Background(), cfg); err != nil {
		jobrun.Fail(err)
	}
}
