package jobrun

import (
	"errors"
	"testing"
)

func TestPipelineErrorCause(t *testing.T) {
	runner := errors.New(`job job-001 failed:
bundle inst012 stage-013 failed:process bundle failed for instruction inst012 using plan stage-013 : while executing Process for Plan[stage-013]:
1: DataSource[S[stage-013_source@localhost:38559], i0] Out:6 Coder:W<CoGBK<int[varintz;c4];c5>>!GWC
6: ParDo[index.buildShardFn] Out:[2 4]
	caused by:
source failed processing data
	caused by:
DoFn[UID:6, PID:e13, Name: github.com/ctxsim/ctxsim/transforms/index.buildShardFn] failed:
index batch: no space left on device`)
	err := NewPipelineError("index", runner)
	if got, want := err.Error(), "index: index.buildShardFn: index batch: no space left on device"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	var pe *PipelineError
	if !errors.As(err, &pe) || pe.Detail != runner.Error() || !errors.Is(err, runner) {
		t.Fatal("the runner's report is not kept")
	}
	if got := NewPipelineError("x", errors.New("plain")).Error(); got != "x: plain" {
		t.Fatalf("got %q", got)
	}
}
