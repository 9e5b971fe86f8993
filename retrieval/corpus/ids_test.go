package corpus

import (
	"regexp"
	"testing"
)

func TestIDsDeterministicAndShaped(t *testing.T) {
	s1 := SentenceID("doc", 3, "Hello.")
	s2 := SentenceID("doc", 3, "Hello.")
	if s1 != s2 {
		t.Fatalf("SentenceID not deterministic: %q != %q", s1, s2)
	}
	c1 := ChunkID("doc", 0, []string{s1})
	if c2 := ChunkID("doc", 0, []string{s2}); c1 != c2 {
		t.Fatalf("ChunkID not deterministic: %q != %q", c1, c2)
	}
	if !regexp.MustCompile(`^s_[0-9a-f]{24}$`).MatchString(s1) {
		t.Errorf("SentenceID = %q, want s_ and 24 hex digits", s1)
	}
	if !regexp.MustCompile(`^c_[0-9a-f]{24}$`).MatchString(c1) {
		t.Errorf("ChunkID = %q, want c_ and 24 hex digits", c1)
	}
}

// TestIDsGolden pins the ID scheme: a change here changes every ID already
// written, so it must be deliberate.
func TestIDsGolden(t *testing.T) {
	if got, want := SentenceID("d1", 0, "Hello world."), goldenSentenceID; got != want {
		t.Errorf("SentenceID(d1, 0, Hello world.) = %q, want %q", got, want)
	}
	if got, want := ChunkID("d1", 0, []string{goldenSentenceID}), goldenChunkID; got != want {
		t.Errorf("ChunkID(d1, 0, [...]) = %q, want %q", got, want)
	}
}

func TestIDsDistinct(t *testing.T) {
	ids := map[string]string{}
	add := func(what, id string) {
		t.Helper()
		if prev, ok := ids[id]; ok {
			t.Errorf("%s and %s share ID %q", prev, what, id)
		}
		ids[id] = what
	}
	add("sentence d/0/x", SentenceID("d", 0, "x"))
	add("sentence d/1/x", SentenceID("d", 1, "x"))
	add("sentence d/0/y", SentenceID("d", 0, "y"))
	add("sentence e/0/x", SentenceID("e", 0, "x"))
	// Length prefixes keep the boundary between fields.
	add("sentence ab/0/c", SentenceID("ab", 0, "c"))
	add("sentence a/0/bc", SentenceID("a", 0, "bc"))
	add("chunk d/0/[a b]", ChunkID("d", 0, []string{"a", "b"}))
	add("chunk d/0/[ab]", ChunkID("d", 0, []string{"ab"}))
	add("chunk d/0/[a b ]", ChunkID("d", 0, []string{"a", "b", ""}))
	add("chunk d/1/[a b]", ChunkID("d", 1, []string{"a", "b"}))
	add("chunk e/0/[a b]", ChunkID("e", 0, []string{"a", "b"}))
	add("chunk d/0/[]", ChunkID("d", 0, nil))
}

// Golden IDs, computed independently of this package (Python hashlib over
// the documented encoding: 8-byte big-endian lengths and integers, kind
// "ctxsim-id/s" or "ctxsim-id/c" first).
const (
	goldenSentenceID = "s_8ed1224e0290a9afbf25c59d"
	goldenChunkID    = "c_4ac0dfd60e00eddda303396f"
)
