package storage

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/schemas"
)

// A manifest whose file list does not match its shard count (or lists a
// file twice, or out of place) is refused by every reader, naming it.
func TestManifestMustMatchShards(t *testing.T) {
	ctx := context.Background()
	for name, edit := range map[string]func(t *testing.T, dir string, m *Manifest){
		"five listed for four shards": func(t *testing.T, dir string, m *Manifest) {
			m.Files = append(m.Files, m.Files[3])
		},
		"five written, four shards": func(t *testing.T, dir string, m *Manifest) {
			m.NumShards = 4
		},
		"three listed for four shards": func(t *testing.T, dir string, m *Manifest) {
			os.Remove(filepath.Join(dir, m.Files[3].Name))
			m.Files = m.Files[:3]
		},
		"out of order": func(t *testing.T, dir string, m *Manifest) {
			m.Files[0], m.Files[1] = m.Files[1], m.Files[0]
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sentences")
			shards := 4
			if strings.HasPrefix(name, "five written") {
				shards = 5
			}
			writePart(t, ctx, TableSpec{Dir: dir, NumShards: shards, Type: reflect.TypeOf(schemas.Sentence{}), RunID: "r1"}, 0)
			mp := filepath.Join(dir, ManifestName)
			b, err := os.ReadFile(mp)
			if err != nil {
				t.Fatal(err)
			}
			var m Manifest
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			edit(t, dir, &m)
			if b, err = json.Marshal(m); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(mp, b, 0o644)
			if _, err := CheckTable(ctx, dir); err == nil || !strings.Contains(err.Error(), mp) {
				t.Errorf("CheckTable: %v; want an error naming %s", err, mp)
			}
			if rows, err := ReadTable[schemas.Sentence](ctx, dir); err == nil || !strings.Contains(err.Error(), mp) {
				t.Errorf("ReadTable: %d rows, %v; want an error naming %s", len(rows), err, mp)
			}
		})
	}
}
