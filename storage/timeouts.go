package storage

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ctxsim/ctxsim/storage/internal/gcscall"
)

// The limits on waiting for gs:// are set by environment variables, so
// that every job, and every worker it starts, has them:
//
//   - $CTXSIM_STORAGE_TIMEOUT (TimeoutEnv, default 60s) bounds each call
//     to GCS while it waits for an answer: a request and its retries (at
//     most a few, spaced out), a page of a listing, one Read or Write of
//     an object's stream, the end of an upload. A call past it fails with
//     "storage: OP gs://BUCKET/OBJECT: no answer from ENDPOINT within ...".
//   - $CTXSIM_STORAGE_CLEANUP_TIMEOUT (CleanupTimeoutEnv, default 180s)
//     bounds what a job does after it has failed or ended (withdrawing a
//     failed run's manifests, giving back its leases), so that a job whose
//     storage went away still exits.
//
// Values are Go durations ("90s", "5m"); a value that is not a positive
// duration is reported on stderr and the default used.
const (
	TimeoutEnv        = gcscall.TimeoutEnv
	CleanupTimeoutEnv = "CTXSIM_STORAGE_CLEANUP_TIMEOUT"
)

// DefaultTimeout and DefaultCleanupTimeout are the limits used when the
// variables are not set.
const (
	DefaultTimeout        = gcscall.DefaultTimeout
	DefaultCleanupTimeout = 3 * time.Minute
)

// CallTimeout returns how long a call to gs:// waits for an answer
// ($CTXSIM_STORAGE_TIMEOUT).
func CallTimeout() time.Duration { return gcscall.Timeout() }

// CleanupTimeout returns how long a job's cleanup may wait on storage
// altogether ($CTXSIM_STORAGE_CLEANUP_TIMEOUT).
func CleanupTimeout() time.Duration {
	return gcscall.EnvDuration(CleanupTimeoutEnv, DefaultCleanupTimeout)
}

// CleanupContext returns a context for a job's cleanup, ended after
// CleanupTimeout(); calls to gs:// stopped by it say so.
func CleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	d := CleanupTimeout()
	return context.WithTimeoutCause(ctx, d,
		fmt.Errorf("the cleanup's limit of %s ($%s) has passed", gcscall.FormatDuration(d), CleanupTimeoutEnv))
}

// unreachable reports whether err is a call to gs:// that got no usable
// answer (no answer in time, every attempt failed, or the caller gave up).
func unreachable(err error) bool {
	var e *gcscall.Error
	return errors.As(err, &e)
}

// withName prefixes err with what failed (format and args, as for
// fmt.Errorf), unless err is an error of a gs:// call, which names the
// operation and the object itself.
func withName(err error, format string, args ...any) error {
	if unreachable(err) {
		return err
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}
