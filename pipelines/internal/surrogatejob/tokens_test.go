package surrogatejob

import (
	"math"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/scoring/contrast"
	"github.com/ctxsim/ctxsim/scoring/method"
)

// The contrastive vocabulary's fingerprint digests its JSON: one that JSON
// cannot encode (a NaN weight) is refused rather than fingerprinted as the
// empty input, alike for every such vocabulary.
func TestCtxVocabFingerprint(t *testing.T) {
	vocab := func(w float32) *method.Models {
		return &method.Models{Ctx: &contrast.Model{Vocab: &contrast.Vocab{Words: []string{"cat"}, Buckets: 1,
			Weights: []float32{w, 1}}}}
	}
	a, _, err := chooseTokens("ctx", vocab(1))
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := chooseTokens("ctx", vocab(2))
	if err != nil || a.Fingerprint() == b.Fingerprint() {
		t.Fatalf("two vocabularies: fingerprints %s and %v, %v", a.Fingerprint(), b, err)
	}
	if v, _, err := chooseTokens("ctx", vocab(float32(math.NaN()))); err == nil || !strings.Contains(err.Error(), "vocabulary") {
		t.Errorf("a NaN weight: vocabulary %v, error %v", v, err)
	}
}
