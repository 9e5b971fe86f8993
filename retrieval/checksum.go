package retrieval

import (
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ShardFiles lists the files under a finished shard's directory, each
// relative path mapped to "size:crc32c" (CRC-32C in hex). The index's
// metadata records them so that Open can tell a damaged or altered shard
// (bleve reads damaged segment files without noticing, or panics) from a
// good one. Files whose names start with a dot are not the shard's (bleve
// writes none; a shard fetched from remote storage on its own has the
// fetch's marker file) and are not listed.
func ShardFiles(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		sum, err := fileSum(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = sum
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("checksum shard %s: %w", dir, err)
	}
	return out, nil
}

func fileSum(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	n, err := io.Copy(h, f)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d:%08x", n, h.Sum32()), nil
}

// CheckShardFiles compares the files under a shard's directory with want
// (from ShardFiles): a missing, extra, resized or altered file is an error
// naming it.
func CheckShardFiles(dir string, want map[string]string) error {
	got, err := ShardFiles(dir)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(want)+len(got))
	for n := range want {
		names = append(names, n)
	}
	for n := range got {
		if _, ok := want[n]; !ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var bad []string
	for _, n := range names {
		w, inWant := want[n]
		g, inGot := got[n]
		switch {
		case !inGot:
			bad = append(bad, n+" is missing")
		case !inWant:
			bad = append(bad, n+" is not part of the index")
		case g != w:
			bad = append(bad, fmt.Sprintf("%s differs (size:crc32c %s, recorded %s)", n, g, w))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("index shard %s is damaged: %s; rebuild the index", dir, strings.Join(bad, "; "))
	}
	return nil
}
