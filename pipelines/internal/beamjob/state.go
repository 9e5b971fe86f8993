package beamjob

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	jobpb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/jobmanagement_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/util/grpcx"
)

// ErrCancelled is the error of a job that the runner reports cancelled.
// Its text is the first thing the job prints.
var ErrCancelled = errors.New("cancelled: the runner reports the job CANCELLED; nothing was committed")

// checkEnded asks the job service that ran the job res stands for how the
// job ended: Beam's portable runners (Prism, Flink's job server) return
// success for a job in any terminal state, CANCELLED among them, so a
// cancelled job would otherwise go on to commit what it had written. It
// returns ErrCancelled for a cancelled job, an error for any end other
// than DONE, and nil for runners that are not portable (Dataflow reports
// its own states) or results without a job (a dry run).
func checkEnded(ctx context.Context, res beam.PipelineResult) error {
	if res == nil || *jobopts.Endpoint == "" {
		return nil
	}
	if v := reflect.ValueOf(res); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	id := res.JobID()
	if id == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cc, err := grpcx.Dial(ctx, *jobopts.Endpoint, time.Minute)
	if err != nil {
		return fmt.Errorf("the job ended, but its state could not be read from the job service at %s: %w", *jobopts.Endpoint, err)
	}
	defer cc.Close()
	st, err := jobpb.NewJobServiceClient(cc).GetState(ctx, &jobpb.GetJobStateRequest{JobId: id})
	if err != nil {
		return fmt.Errorf("the job ended, but the job service at %s did not say how: %w", *jobopts.Endpoint, err)
	}
	return endState(st.GetState())
}

// endState turns a job's final state into the job's error.
func endState(s jobpb.JobState_Enum) error {
	switch s {
	case jobpb.JobState_DONE:
		return nil
	case jobpb.JobState_CANCELLED, jobpb.JobState_CANCELLING:
		return ErrCancelled
	}
	return fmt.Errorf("the job ended in state %s, not DONE; nothing was committed", s)
}
