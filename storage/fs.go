package storage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	gcs "cloud.google.com/go/storage"
	"google.golang.org/api/iterator"
	"google.golang.org/api/option"

	"github.com/ctxsim/ctxsim/storage/internal/gcscall"
)

// FS is a filesystem the jobs read and write: the local disk or Google
// Cloud Storage (gs://bucket/object). Names are full paths, as given.
type FS interface {
	// List returns the files matching glob (sorted by the backend: local
	// globs as filepath.Glob, gs:// object names in lexical order); "**"
	// matches across "/" on gs://.
	List(ctx context.Context, glob string) ([]string, error)
	OpenRead(ctx context.Context, name string) (io.ReadCloser, error)
	// OpenWrite creates or truncates name; the file is complete when the
	// writer is closed without error.
	OpenWrite(ctx context.Context, name string) (io.WriteCloser, error)
	Size(ctx context.Context, name string) (int64, error)
	Remove(ctx context.Context, name string) error
	// Rename moves a file (on gs://, a copy and a delete).
	Rename(ctx context.Context, from, to string) error
	Close() error
}

// New returns the filesystem of path: gs:// or, without a scheme, local.
//
// Calls to gs:// wait for an answer for at most CallTimeout() at a time
// (each request with its few retries, each page of a listing, each Read
// or Write of a stream) and then fail with an error that names the
// operation, the object and the endpoint.
func New(ctx context.Context, path string) (FS, error) {
	switch {
	case strings.HasPrefix(path, "gs://"):
		c, err := gcscall.NewClient(ctx)
		if err != nil {
			// Public buckets can still be read.
			var uerr error
			if c, uerr = gcscall.NewClient(ctx, option.WithoutAuthentication()); uerr != nil {
				return nil, fmt.Errorf("gs:// client: %w", err)
			}
		}
		return gcsFS{c}, nil
	case IsRemote(path):
		return nil, fmt.Errorf("%s: only local paths and gs:// are supported", path)
	}
	return localFS{}, nil
}

// Write writes data to name on its filesystem.
func Write(ctx context.Context, fs FS, name string, data []byte) error {
	w, err := fs.OpenWrite(ctx, name)
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

type localFS struct{}

func (localFS) List(_ context.Context, glob string) ([]string, error) { return filepath.Glob(glob) }
func (localFS) OpenRead(_ context.Context, name string) (io.ReadCloser, error) {
	return os.Open(name)
}
func (localFS) OpenWrite(_ context.Context, name string) (io.WriteCloser, error) {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
}
func (localFS) Size(_ context.Context, name string) (int64, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return -1, err
	}
	return fi.Size(), nil
}
func (localFS) Remove(_ context.Context, name string) error { return os.Remove(name) }
func (localFS) Rename(_ context.Context, from, to string) error {
	return os.Rename(from, to)
}
func (localFS) Close() error { return nil }

type gcsFS struct{ c *gcs.Client }

// splitGS splits gs://bucket/object.
func splitGS(name string) (bucket, object string, err error) {
	rest, ok := strings.CutPrefix(name, "gs://")
	if !ok {
		return "", "", fmt.Errorf("%s: not a gs:// path", name)
	}
	bucket, object, _ = strings.Cut(rest, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("%s: no bucket", name)
	}
	return bucket, object, nil
}

func (f gcsFS) obj(name string) (*gcs.ObjectHandle, error) {
	b, o, err := splitGS(name)
	if err != nil {
		return nil, err
	}
	return f.c.Bucket(b).Object(o), nil
}

func (f gcsFS) List(ctx context.Context, glob string) ([]string, error) {
	b, pattern, err := splitGS(glob)
	if err != nil {
		return nil, err
	}
	re, err := globRegexp(pattern)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", glob, err)
	}
	prefix := pattern
	if i := strings.IndexAny(pattern, "*?["); i >= 0 {
		prefix = pattern[:i]
	}
	c := gcscall.Start(ctx, "list", glob)
	defer c.End()
	var out []string
	it := f.c.Bucket(b).Retryer(c.Retry()).Objects(c.Context(), &gcs.Query{Prefix: prefix})
	for {
		var a *gcs.ObjectAttrs
		err := c.Do(func() (err error) {
			a, err = it.Next()
			return err
		})
		if errors.Is(err, iterator.Done) {
			break
		}
		if err != nil {
			return nil, err
		}
		if re.MatchString(a.Name) {
			out = append(out, "gs://"+b+"/"+a.Name)
		}
	}
	return out, nil
}

func (f gcsFS) OpenRead(ctx context.Context, name string) (io.ReadCloser, error) {
	o, err := f.obj(name)
	if err != nil {
		return nil, err
	}
	return gcscall.Start(ctx, "read", name).NewReader(o)
}

func (f gcsFS) OpenWrite(ctx context.Context, name string) (io.WriteCloser, error) {
	o, err := f.obj(name)
	if err != nil {
		return nil, err
	}
	return gcscall.Start(ctx, "write", name).NewWriter(o), nil
}

func (f gcsFS) Size(ctx context.Context, name string) (int64, error) {
	o, err := f.obj(name)
	if err != nil {
		return -1, err
	}
	c := gcscall.Start(ctx, "stat", name)
	defer c.End()
	var a *gcs.ObjectAttrs
	if err := c.Do(func() (err error) {
		a, err = o.Retryer(c.Retry()).Attrs(c.Context())
		return err
	}); err != nil {
		return -1, err
	}
	return a.Size, nil
}

func (f gcsFS) Remove(ctx context.Context, name string) error {
	o, err := f.obj(name)
	if err != nil {
		return err
	}
	return remove(ctx, o, name)
}

// remove deletes the object o, named name, as one call.
func remove(ctx context.Context, o *gcs.ObjectHandle, name string) error {
	c := gcscall.Start(ctx, "remove", name)
	defer c.End()
	return c.Do(func() error { return o.Retryer(c.Retry()).Delete(c.Context()) })
}

func (f gcsFS) Rename(ctx context.Context, from, to string) error {
	src, err := f.obj(from)
	if err != nil {
		return err
	}
	dst, err := f.obj(to)
	if err != nil {
		return err
	}
	c := gcscall.Start(ctx, "copy", from+" to "+to)
	defer c.End()
	if err := c.Do(func() error {
		_, err := dst.Retryer(c.Retry()).CopierFrom(src).Run(c.Context())
		return err
	}); err != nil {
		return err
	}
	return remove(ctx, src, from)
}

func (f gcsFS) Close() error { return f.c.Close() }

// globRegexp translates an object-name glob: "*" and "?" stay within one
// "/"-separated segment, "**" crosses segments ("**/" also matches
// nothing), and [...] classes are kept ([!...] negates).
func globRegexp(pattern string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; c {
		case '*':
			switch {
			case i+2 < len(rs) && rs[i+1] == '*' && rs[i+2] == '/':
				b.WriteString("(?:.*/)?")
				i += 2
			case i+1 < len(rs) && rs[i+1] == '*':
				b.WriteString(".*")
				i++
			default:
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		case '[':
			j := i + 1
			if j < len(rs) && rs[j] == '!' {
				j++
			}
			if j < len(rs) && rs[j] == ']' {
				j++
			}
			for j < len(rs) && rs[j] != ']' {
				j++
			}
			if j >= len(rs) {
				return nil, fmt.Errorf("unclosed '[' in %q", pattern)
			}
			class := string(rs[i+1 : j])
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + class + "]")
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}
