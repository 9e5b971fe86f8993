package harvest

import (
	"context"
	"fmt"
	"math"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/transforms/beamreg"
	"github.com/ctxsim/ctxsim/transforms/counter"
)

func init() {
	// Every record written through parquetio is registered, so that its
	// tables' manifests name it.
	beam.RegisterType(reflect.TypeOf(schemas.TrainingPair{}))
	beamreg.DoFn(&exportFn{})
	register.Emitter1[schemas.TrainingPair]()
}

// Splits are the splits of the labeled pairs (Split), each exported as a
// table of its own under export/.
var Splits = []string{"train", "dev", "test"}

// ExportDir is the directory, under a harvest's output, of the
// training-ready export: one table of schemas.TrainingPair per split
// (export/train, export/dev, export/test).
const ExportDir = "export"

// ScoreMapping says how an exported pair's score is made from its label:
// the labels are cosines (of the two sentences' context-score vectors,
// Eq. 4, or of their TF-IDF vectors, or a mean of such), in [-1, 1]; a
// negative one means the contexts disagree, which a similarity trainer
// reads as no similarity. It is recorded in the summary and in every
// export file's metadata (schemas.MetaScoreKey).
const ScoreMapping = "score = min(max(label, 0), 1): the label (a cosine in [-1, 1]) clipped to [0, 1]; a negative label is 0"

// Score is the exported score of a pair labeled label (ScoreMapping).
func Score(label float32) float32 {
	return min(max(label, 0), 1)
}

// Export splits the labeled pairs (schemas.LabeledPair) into the three
// splits' tables of the export, in Splits' order: their two sentences and
// their score (Score) only.
func Export(s beam.Scope, pairs beam.PCollection) []beam.PCollection {
	s = s.Scope("harvest.Export")
	train, dev, test := beam.ParDo3(s, &exportFn{}, pairs)
	return []beam.PCollection{train, dev, test}
}

// exportFn emits a labeled pair as a training pair in its split's output,
// and counts the pairs of each split (export/pairs_<split>).
type exportFn struct {
	counts map[string]counter.Counter
}

func (f *exportFn) Setup() {
	f.counts = map[string]counter.Counter{}
	for _, sp := range Splits {
		f.counts[sp] = counter.New("export", "pairs_"+sp)
	}
}

func (f *exportFn) ProcessElement(ctx context.Context, p schemas.LabeledPair, train, dev, test func(schemas.TrainingPair)) error {
	if math.IsNaN(float64(p.Label)) {
		return fmt.Errorf("export: pair %s has no label (NaN)", p.PairID)
	}
	tp := schemas.TrainingPair{Sentence1: p.Sentence1, Sentence2: p.Sentence2, Score: Score(p.Label)}
	switch p.Split {
	case "train":
		train(tp)
	case "dev":
		dev(tp)
	case "test":
		test(tp)
	default:
		return fmt.Errorf("export: pair %s is in split %q, not one of %v", p.PairID, p.Split, Splits)
	}
	f.counts[p.Split].Inc(ctx, 1)
	return nil
}
