package method

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/scoring/contrast"
	"github.com/ctxsim/ctxsim/scoring/examples"
)

// savedCtxModel trains a small contrastive model and saves it into a new
// directory.
func savedCtxModel(t *testing.T) string {
	t.Helper()
	var docs []examples.Doc
	for _, c := range testChunks(12) {
		docs = append(docs, examples.Doc{ID: c.ID, Sentences: c.Sentences})
	}
	cc := contrast.DefaultConfig()
	cc.Dim, cc.Vocab, cc.Buckets, cc.MinCount, cc.Batch, cc.Epochs, cc.WarmupSteps = 16, 100, 8, 1, 8, 1, 1
	cm, _, err := contrast.Train(cc, docs, contrast.TrainOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := cm.Save(dir, map[string]any{"seed": 1}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// ctxKey is the vector key of the contrastive model of m.
func ctxKey(t *testing.T, m *Models) string {
	t.Helper()
	vs, err := m.VectorScorers()
	if err != nil || len(vs) != 1 {
		t.Fatalf("vector scorers %v, %v", vs, err)
	}
	return vs[0].VectorKey()
}

// TestModelsCoverTheVocabulary is issue 36's edited ctx.json ("the" →
// "xhe" in the vocabulary): the edited file is refused, naming it; and a
// model saved with that vocabulary and the same weights has another
// fingerprint and another key for its stored vectors.
func TestModelsCoverTheVocabulary(t *testing.T) {
	dir := savedCtxModel(t)
	orig, err := LoadModels(dir)
	if err != nil {
		t.Fatal(err)
	}
	cm := orig.Ctx
	i := slices.Index(cm.Vocab.Words, "the")
	if i < 0 {
		t.Fatalf("no \"the\" in the vocabulary %v", cm.Vocab.Words)
	}

	edited := t.TempDir()
	if err := os.CopyFS(edited, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(edited, "ctx.json")
	b, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(b), `"the"`, `"xhe"`, 1)), 0o644)
	if _, err := LoadModels(edited); err == nil || !strings.Contains(err.Error(), p+": checksum mismatch") {
		t.Fatalf("LoadModels with an edited vocabulary: %v, want a checksum mismatch naming %s", err, p)
	}

	// The same weights saved with the other vocabulary: a model of its own.
	words := slices.Clone(cm.Vocab.Words)
	words[i] = "xhe"
	other := &contrast.Model{Cfg: cm.Cfg, Vocab: &contrast.Vocab{Stem: cm.Vocab.Stem, Words: words,
		Buckets: cm.Vocab.Buckets, Weights: cm.Vocab.Weights, Sentences: cm.Vocab.Sentences}, Sent: cm.Sent, Ctx: cm.Ctx}
	resaved := t.TempDir()
	if err := other.Save(resaved, map[string]any{"seed": 1}); err != nil {
		t.Fatal(err)
	}
	m, err := LoadModels(resaved)
	if err != nil {
		t.Fatal(err)
	}
	if m.Fingerprint == orig.Fingerprint {
		t.Error("two vocabularies over the same weights have one model fingerprint")
	}
	if ctxKey(t, m) == ctxKey(t, orig) {
		t.Errorf("two vocabularies over the same weights share the stored vectors %s", ctxKey(t, m))
	}

	// Saved again unchanged, with other training info: the same model.
	again := t.TempDir()
	if err := cm.Save(again, map[string]any{"seed": 1, "train_seconds": 9.5}); err != nil {
		t.Fatal(err)
	}
	if m, err := LoadModels(again); err != nil || m.Fingerprint != orig.Fingerprint || ctxKey(t, m) != ctxKey(t, orig) {
		t.Errorf("the same model saved again: fingerprint %s (was %s), err %v", m.Fingerprint, orig.Fingerprint, err)
	}
}
