package jobrun

import (
	"regexp"
	"strings"
)

// PipelineError is a job's failure inside the pipeline: Cause is the
// innermost error, the one a person needs; Detail is the runner's whole
// report (the bundle, its plan, each layer that passed the error on).
type PipelineError struct {
	Job, Cause, Detail string
	err                error
}

func (e *PipelineError) Error() string { return e.Job + ": " + e.Cause }
func (e *PipelineError) Unwrap() error { return e.err }

// doFnFailed matches the runner's line naming the DoFn that failed.
var doFnFailed = regexp.MustCompile(`^DoFn\[[^\]]*Name: ([^\]]+)\] failed:\s*`)

// NewPipelineError reduces a runner's error to its cause: the text after the
// last "caused by:", with the failing DoFn's name in short.
func NewPipelineError(job string, err error) error {
	msg := err.Error()
	cause := msg
	if i := strings.LastIndex(cause, "caused by:"); i >= 0 {
		cause = cause[i+len("caused by:"):]
	}
	cause = strings.TrimSpace(cause)
	if m := doFnFailed.FindStringSubmatch(cause); m != nil {
		name := m[1]
		name = name[strings.LastIndex(name, "/")+1:]
		cause = name + ": " + strings.TrimSpace(cause[len(m[0]):])
	}
	cause = strings.Join(strings.Fields(cause), " ")
	if cause == "" {
		cause = strings.Join(strings.Fields(msg), " ")
	}
	return &PipelineError{Job: job, Cause: cause, Detail: msg, err: err}
}
