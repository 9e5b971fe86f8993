// Package lease gives one run at a time the use of an output directory.
//
// A run takes the lease by creating dir/_lease.json, which holds its run
// ID, host, process ID, job and start time, with a create that fails when
// the file exists: O_EXCL on a local disk, a generation-matched create
// (ifGenerationMatch=0) on gs://. While the file is there, another run
// into the same directory is refused with an error naming the holder. The
// lease is released (the file removed) when the run ends, successfully or
// not.
//
// A run killed before it could release leaves the file behind. When the
// holder ran on this host and its process is gone, the lease is stale and
// the next run takes it over by itself, saying so. A holder on another host
// cannot be checked from here: the error says how to take over (--take_over,
// or removing the file) once the user knows that run is dead.
package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"cloud.google.com/go/storage"
	"google.golang.org/api/googleapi"

	"github.com/ctxsim/ctxsim/storage/internal/gcscall"
)

// FileName is the lease file's name inside the directory it guards.
const FileName = "_lease.json"

// Holder describes the run that holds a lease.
type Holder struct {
	RunID   string    `json:"run_id"`
	Job     string    `json:"job"`
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
}

func (h Holder) String() string {
	return fmt.Sprintf("run %s (%s, pid %d on %s, started %s)", h.RunID, h.Job, h.PID, h.Host,
		h.Started.Format(time.RFC3339))
}

// Lease is a held lease; Release gives it back.
type Lease struct {
	Path   string
	Holder Holder
	store  store
}

// HeldError is returned when another run holds the lease.
type HeldError struct {
	Path   string
	Holder Holder
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("%s is in use by %s; two runs must not write one output. "+
		"If that run is dead, take over with --take_over (or remove %s)", filepath.Dir(e.Path), e.Holder, e.Path)
}

// Acquire takes the lease on dir (local or gs://) for the run runID of job.
// With takeOver it replaces a lease held by another run, which the caller
// asserts is dead.
func Acquire(ctx context.Context, dir, job, runID string, takeOver bool) (*Lease, error) {
	st, p, err := storeFor(ctx, dir)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	h := Holder{RunID: runID, Job: job, Host: host, PID: os.Getpid(), Started: time.Now().UTC().Truncate(time.Second)}
	body, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("the lease %s: %w", p, err)
	}
	for attempt := 0; attempt < 3; attempt++ {
		err := st.create(ctx, p, append(body, '\n'))
		if err == nil {
			return &Lease{Path: p, Holder: h, store: st}, nil
		}
		if !errors.Is(err, errExists) {
			return nil, fmt.Errorf("take the lease %s: %w", p, err)
		}
		old, gen, rerr := st.read(ctx, p)
		if errors.Is(rerr, errNotFound) {
			continue // released meanwhile: try again
		}
		if rerr != nil {
			return nil, fmt.Errorf("read the lease %s: %w", p, rerr)
		}
		var other Holder
		if json.Unmarshal(old, &other) != nil {
			other = Holder{RunID: "unreadable lease"}
		}
		stale := other.Host == host && other.PID > 0 && !alive(other.PID)
		if !stale && !takeOver {
			return nil, &HeldError{Path: p, Holder: other}
		}
		if stale {
			fmt.Fprintf(os.Stderr, "%s: taking over the lease of %s, whose process is gone\n", job, other)
		} else {
			fmt.Fprintf(os.Stderr, "%s: taking over the lease of %s (--take_over)\n", job, other)
		}
		// Remove exactly the lease that was read, so that a run which took
		// it meanwhile keeps it.
		if err := st.remove(ctx, p, gen, old); err != nil && !errors.Is(err, errNotFound) {
			return nil, fmt.Errorf("take over the lease %s: %w", p, err)
		}
	}
	return nil, fmt.Errorf("take the lease %s: other runs keep taking it", p)
}

// Release removes the lease if this run still holds it.
func (l *Lease) Release(ctx context.Context) error {
	b, gen, err := l.store.read(ctx, l.Path)
	if errors.Is(err, errNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var h Holder
	if json.Unmarshal(b, &h) != nil || h.RunID != l.Holder.RunID {
		return fmt.Errorf("release %s: now held by another run (%s)", l.Path, strings.TrimSpace(string(b)))
	}
	if err := l.store.remove(ctx, l.Path, gen, b); err != nil && !errors.Is(err, errNotFound) {
		return err
	}
	return nil
}

// alive reports whether a process with this ID exists on this host.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

var (
	errExists   = errors.New("exists")
	errNotFound = errors.New("not found")
)

// store creates, reads and removes the lease file where it lives. gen is
// the version read (a GCS generation; unused locally).
type store interface {
	create(ctx context.Context, p string, body []byte) error
	read(ctx context.Context, p string) (body []byte, gen int64, err error)
	remove(ctx context.Context, p string, gen int64, body []byte) error
}

func storeFor(ctx context.Context, dir string) (store, string, error) {
	if strings.HasPrefix(dir, "gs://") {
		c, err := gcscall.NewClient(ctx)
		if err != nil {
			return nil, "", err
		}
		return gcsStore{c}, strings.TrimSuffix(dir, "/") + "/" + FileName, nil
	}
	if strings.Contains(dir, "://") {
		return nil, "", fmt.Errorf("lease: %s: only local paths and gs:// are supported", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, "", err
	}
	return localStore{}, filepath.Join(dir, FileName), nil
}

type localStore struct{}

func (localStore) create(_ context.Context, p string, body []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return errExists
	}
	if err != nil {
		return err
	}
	_, werr := f.Write(body)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(p)
	}
	return werr
}

func (localStore) read(_ context.Context, p string) ([]byte, int64, error) {
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, errNotFound
	}
	return b, 0, err
}

// remove moves the file aside, checks that it is the one read, and only
// then deletes it; a different file (a run that took the lease meanwhile)
// is put back.
func (localStore) remove(_ context.Context, p string, _ int64, body []byte) error {
	aside := fmt.Sprintf("%s.%d.%d", p, os.Getpid(), time.Now().UnixNano())
	if err := os.Rename(p, aside); errors.Is(err, os.ErrNotExist) {
		return errNotFound
	} else if err != nil {
		return err
	}
	got, err := os.ReadFile(aside)
	if err == nil && string(got) != string(body) {
		if err := os.Link(aside, p); err == nil {
			os.Remove(aside)
			return fmt.Errorf("%s was taken by another run meanwhile", p)
		}
	}
	return os.Remove(aside)
}

type gcsStore struct{ c *storage.Client }

func (g gcsStore) obj(p string) *storage.ObjectHandle {
	bucket, name, _ := strings.Cut(strings.TrimPrefix(p, "gs://"), "/")
	return g.c.Bucket(bucket).Object(name)
}

// create, read and remove are each one call to GCS, under its deadline
// (package gcscall).
func (g gcsStore) create(ctx context.Context, p string, body []byte) error {
	c := gcscall.Start(ctx, "create", p)
	w := c.NewWriter(g.obj(p).If(storage.Conditions{DoesNotExist: true}))
	w.W.ContentType = "application/json"
	if _, err := w.Write(body); err != nil {
		w.Close()
		return err
	}
	err := w.Close()
	if isPrecondition(err) {
		return errExists
	}
	return err
}

func (g gcsStore) read(ctx context.Context, p string) ([]byte, int64, error) {
	r, err := gcscall.Start(ctx, "read", p).NewReader(g.obj(p))
	if errors.Is(err, storage.ErrObjectNotExist) {
		return nil, 0, errNotFound
	}
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	return b, r.Generation(), err
}

func (g gcsStore) remove(ctx context.Context, p string, gen int64, _ []byte) error {
	c := gcscall.Start(ctx, "remove", p)
	defer c.End()
	o := g.obj(p).If(storage.Conditions{GenerationMatch: gen}).Retryer(c.Retry())
	err := c.Do(func() error { return o.Delete(c.Context()) })
	if errors.Is(err, storage.ErrObjectNotExist) {
		return errNotFound
	}
	if isPrecondition(err) {
		return fmt.Errorf("%s was taken by another run meanwhile", p)
	}
	return err
}

// isPrecondition reports whether GCS refused a conditional request
// (HTTP 412 Precondition Failed).
func isPrecondition(err error) bool {
	var ge *googleapi.Error
	return errors.As(err, &ge) && ge.Code == http.StatusPreconditionFailed
}
