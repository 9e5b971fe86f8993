// Package gcscall bounds the calls this module makes to Google Cloud
// Storage, so that a job whose storage does not answer fails with a clear
// error instead of waiting forever:
//
//   - clients (NewClient) retry a failed request a few times, spaced out
//     (MaxAttempts, Backoff), where the library would retry without end;
//   - each call (Start) has a deadline, $CTXSIM_STORAGE_TIMEOUT (default
//     60s), on every step that waits for the endpoint: a request with its
//     retries, one page of a listing, one Read or Write of an object's
//     stream, the end of an upload;
//   - a call that got no usable answer returns an *Error naming the
//     operation, the object and the endpoint.
package gcscall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	gcs "cloud.google.com/go/storage"
	"github.com/googleapis/gax-go/v2"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"
)

// TimeoutEnv names the environment variable that sets the deadline of
// each step of a call (a Go duration such as "60s" or "2m").
const TimeoutEnv = "CTXSIM_STORAGE_TIMEOUT"

// DefaultTimeout is the deadline of a step when TimeoutEnv is not set.
const DefaultTimeout = 60 * time.Second

// MaxAttempts bounds the attempts of one request that fails with an
// error worth retrying (a refused connection, HTTP 429 or 5xx). Uploads
// are retried by another part of the library, which ignores it: their
// deadline bounds them.
const MaxAttempts = 6

// Backoff spaces the attempts out: about 15s between the first and the
// last on average, 31s at most, within DefaultTimeout.
var Backoff = gax.Backoff{Initial: time.Second, Max: 16 * time.Second, Multiplier: 2}

// Timeout returns the deadline of one step of a call: $CTXSIM_STORAGE_TIMEOUT,
// or DefaultTimeout.
func Timeout() time.Duration { return EnvDuration(TimeoutEnv, DefaultTimeout) }

var warned sync.Map // environment variable → struct{}

// EnvDuration returns the duration the environment variable name holds,
// or def when it is unset. A value that is not a positive duration is
// reported on stderr (once per variable) and def is used.
func EnvDuration(name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err == nil && d > 0 {
		return d
	}
	if _, done := warned.LoadOrStore(name, struct{}{}); !done {
		fmt.Fprintf(os.Stderr, "warning: %s=%q is not a positive duration such as 60s; using %s\n",
			name, v, FormatDuration(def))
	}
	return def
}

// FormatDuration writes d in seconds ("60s", "0.5s", "180s"), the unit a
// person sets these limits in.
func FormatDuration(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "s"
}

// Endpoint returns the address the GCS client library sends requests to:
// the emulator of STORAGE_EMULATOR_HOST when set, or Google's.
func Endpoint() string {
	h := os.Getenv("STORAGE_EMULATOR_HOST")
	switch {
	case h == "":
		return "https://storage.googleapis.com"
	case strings.Contains(h, "://"):
		return h
	}
	return "http://" + h
}

// NewClient returns a GCS client whose requests are retried at most
// MaxAttempts times, spaced by Backoff.
func NewClient(ctx context.Context, opts ...option.ClientOption) (*gcs.Client, error) {
	c, err := gcs.NewClient(ctx, opts...)
	if err != nil {
		return nil, err
	}
	c.SetRetry(gcs.WithBackoff(Backoff), gcs.WithMaxAttempts(MaxAttempts))
	return c, nil
}

// Error is a call to GCS that got no usable answer: the endpoint did not
// answer within the deadline (Limit is set), the caller's context ended
// first (Stopped is set), or every attempt failed.
type Error struct {
	Op       string        // "create", "list", "read", ...
	Name     string        // the object, or the listing's glob
	Endpoint string        // see Endpoint
	Limit    time.Duration // the deadline that passed, if it did
	Stopped  error         // why the caller's context ended, if it ended first
	Attempts int           // failed attempts seen before either
	Last     error         // the last of them, if any
	Err      error         // what the library returned
}

func (e *Error) Error() string {
	what := "no response"
	switch {
	case e.Attempts == 1:
		what = "1 failed attempt: " + brief(e.Last)
	case e.Attempts > 1:
		what = fmt.Sprintf("%d failed attempts; last: %s", e.Attempts, brief(e.Last))
	}
	switch {
	case e.Limit > 0:
		return fmt.Sprintf("storage: %s %s: no answer from %s within %s (%s)",
			e.Op, e.Name, e.Endpoint, FormatDuration(e.Limit), what)
	case e.Stopped != nil:
		return fmt.Sprintf("storage: %s %s: stopped waiting for %s: %v (%s)",
			e.Op, e.Name, e.Endpoint, e.Stopped, what)
	}
	return fmt.Sprintf("storage: %s %s at %s: %s", e.Op, e.Name, e.Endpoint,
		strings.TrimPrefix(brief(e.Err), "storage: "))
}

// brief drops the request's URL from an HTTP client's error: the error
// names the endpoint and the object already.
func brief(err error) string {
	if err == nil {
		return "no error"
	}
	msg := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		msg = strings.Replace(msg, ue.Error(), ue.Err.Error(), 1)
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Call is one operation on one object (or one listing) under a deadline
// that runs while the call waits for the endpoint (Do). Start it, give the
// client library its Context and its Retry option, run each step that
// waits through Do, and End it.
type Call struct {
	op, name, endpoint string
	limit              time.Duration
	parent             context.Context
	ctx                context.Context
	cancel             context.CancelFunc

	mu       sync.Mutex
	expired  bool
	attempts int
	last     error
}

// Start starts the call op on name, within ctx.
func Start(ctx context.Context, op, name string) *Call {
	c := &Call{op: op, name: name, endpoint: Endpoint(), limit: Timeout(), parent: ctx}
	c.ctx, c.cancel = context.WithCancel(ctx)
	return c
}

// Context is the context to give the library for the call. It is canceled
// when a step runs past the deadline, and by End.
func (c *Call) Context() context.Context { return c.ctx }

// Retry is the retry option to give the call's bucket or object handle
// (Retryer): it keeps the library's choice of what to retry, and records
// the failed attempts for the error.
func (c *Call) Retry() gcs.RetryOption {
	return gcs.WithErrorFunc(func(err error) bool {
		// The library asks after successful attempts too. An attempt
		// ended by the call's own deadline is not the endpoint's failure.
		if err != nil && c.ctx.Err() == nil {
			c.mu.Lock()
			c.attempts++
			c.last = err
			c.mu.Unlock()
		}
		return gcs.ShouldRetry(err)
	})
}

// Do runs one step of the call that waits for the endpoint, canceling the
// call's context when it has not returned within the deadline, and returns
// its error as Err does.
func (c *Call) Do(step func() error) error {
	t := time.AfterFunc(c.limit, func() {
		c.mu.Lock()
		c.expired = true
		c.mu.Unlock()
		c.cancel()
	})
	err := step()
	t.Stop()
	return c.Err(err)
}

// End releases the call's context; the call's streams are closed then.
func (c *Call) End() { c.cancel() }

// Err returns err, from the library, as the caller should see it: an
// answer of the endpoint (no such object, a failed precondition, a
// refused permission, the end of a stream or a listing) as it is, and any
// other failure as an *Error.
func (c *Call) Err(err error) error {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, iterator.Done) {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := &Error{Op: c.op, Name: c.name, Endpoint: c.endpoint, Err: err}
	switch {
	case c.expired:
		e.Limit, e.Attempts, e.Last = c.limit, c.attempts, c.last
		return e
	case c.parent.Err() != nil:
		e.Stopped, e.Attempts, e.Last = context.Cause(c.parent), c.attempts, c.last
		return e
	case answered(err):
		return err
	}
	return e
}

// answered reports whether err is the endpoint's answer to a request it
// refused (HTTP 4xx other than 408 and 429, which are retried).
func answered(err error) bool {
	if errors.Is(err, gcs.ErrObjectNotExist) || errors.Is(err, gcs.ErrBucketNotExist) {
		return true
	}
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code >= 400 && ge.Code < 500 && ge.Code != 408 && ge.Code != 429
}

// Reader is an object's stream read under the call's deadline: each Read
// must return within it. Close ends the call.
type Reader struct {
	c *Call
	r *gcs.Reader
}

// NewReader opens the object o for reading within the call.
func (c *Call) NewReader(o *gcs.ObjectHandle) (*Reader, error) {
	var r *gcs.Reader
	err := c.Do(func() (err error) {
		r, err = o.Retryer(c.Retry()).NewReader(c.ctx)
		return err
	})
	if err != nil {
		c.End()
		return nil, err
	}
	return &Reader{c: c, r: r}, nil
}

func (r *Reader) Read(p []byte) (n int, err error) {
	err = r.c.Do(func() error {
		n, err = r.r.Read(p)
		return err
	})
	return n, err
}

// Generation returns the generation of the object being read.
func (r *Reader) Generation() int64 { return r.r.Attrs.Generation }

// Close closes the stream and ends the call.
func (r *Reader) Close() error {
	err := r.r.Close()
	r.c.End()
	return err
}

// Writer is an object's upload under the call's deadline: each Write, and
// Close, which completes the upload, must return within it.
type Writer struct {
	c *Call
	W *gcs.Writer // to set its attributes before the first Write
}

// NewWriter opens the object o for writing within the call.
func (c *Call) NewWriter(o *gcs.ObjectHandle) *Writer {
	return &Writer{c: c, W: o.Retryer(c.Retry()).NewWriter(c.ctx)}
}

func (w *Writer) Write(p []byte) (n int, err error) {
	err = w.c.Do(func() error {
		n, err = w.W.Write(p)
		return err
	})
	return n, err
}

// Close completes the upload and ends the call.
func (w *Writer) Close() error {
	err := w.c.Do(w.W.Close)
	w.c.End()
	return err
}
