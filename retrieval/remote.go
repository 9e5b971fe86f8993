package retrieval

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ctxsim/ctxsim/storage"
)

// OpenAt opens the index in dir, local or remote; a remote index is first
// fetched into the local cache (see storage.Fetch).
func OpenAt(ctx context.Context, dir string) (*Index, error) {
	local, err := storage.Fetch(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", dir, err)
	}
	return Open(local)
}

// ReadMetaAt reads the metadata of the index in dir, local or remote, without
// fetching the index.
func ReadMetaAt(ctx context.Context, dir string) (Meta, error) {
	if !storage.IsRemote(dir) {
		return ReadMeta(dir)
	}
	var m Meta
	name := storage.Join(dir, MetaFile)
	ok, err := storage.Exists(ctx, name)
	if err != nil {
		return m, err
	}
	if !ok {
		return m, fmt.Errorf("%s is not a complete ctxsim index: %s is missing", dir, MetaFile)
	}
	b, err := storage.ReadFile(ctx, name)
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("%s: corrupt index metadata: %w", dir, err)
	}
	return m, nil
}
