package surrogatejob

import (
	"math"
	"strconv"

	"github.com/ctxsim/ctxsim/scoring/surrogate"
)

// num is a float64 written to JSON as null when it is NaN or infinite.
type num float64

func (x num) MarshalJSON() ([]byte, error) {
	f := float64(x)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

type devJSON struct {
	Loss     num `json:"loss"`
	Spearman num `json:"spearman"`
	Pearson  num `json:"pearson"`
}

type epochJSON struct {
	Epoch     int      `json:"epoch"`
	TrainLoss num      `json:"train_loss"`
	Dev       *devJSON `json:"dev,omitempty"`
	Seconds   num      `json:"seconds"`
}

type curveJSON struct {
	Init   *devJSON    `json:"init,omitempty"`
	Epochs []epochJSON `json:"epochs"`
	// Interpolated: the saved model's dev figures under --interpolate.
	Interpolated *devJSON `json:"interpolated,omitempty"`
}

func devOf(d *surrogate.DevStats) *devJSON {
	if d == nil {
		return nil
	}
	return &devJSON{num(d.Loss), num(d.Spearman), num(d.Pearson)}
}

func curveOf(c surrogate.Curve) curveJSON {
	out := curveJSON{Init: devOf(c.Init), Epochs: []epochJSON{}, Interpolated: devOf(c.Interpolated)}
	for _, e := range c.Epochs {
		out.Epochs = append(out.Epochs, epochJSON{e.Epoch, num(e.TrainLoss), devOf(e.Dev), num(e.Seconds)})
	}
	return out
}

// rankJSON is EvalRank's result.
type rankJSON struct {
	MRR       num `json:"mrr"`
	Hits1     num `json:"hits1"`
	Hits3     num `json:"hits3"`
	Threshold num `json:"threshold"`
	Positives int `json:"positives"`
	Queries   int `json:"queries"`
	Skipped   int `json:"skipped"`
}

func rankOf(r surrogate.RankResult) *rankJSON {
	return &rankJSON{num(r.MRR), num(r.Hits1), num(r.Hits3), num(r.Threshold), r.Positives, r.Queries, r.Skipped}
}

// throughput is the encoder's speed on the distinct STS sentences, in one
// goroutine (so on one core, whatever GOMAXPROCS is).
type throughput struct {
	SentencesPerSecPerCore num `json:"sentences_per_sec_per_core"`
	TokensPerSecPerCore    num `json:"tokens_per_sec_per_core"`
	Sentences              int `json:"sentences"`
	Repeats                int `json:"repeats"`
	Seconds                num `json:"seconds"`
}

// result is one row of the table.
type result struct {
	Name      string                     `json:"name"`
	Kind      string                     `json:"kind"` // "surrogate", "baseline", "origin" or the labeler of an evaluate row (hybrid, ensemble, aligned)
	Objective *surrogate.ObjectiveConfig `json:"objective,omitempty"`
	Dir       string                     `json:"dir,omitempty"`
	// Spearman100 is the Spearman correlation ×100 of cosine with the STS
	// gold scores; null without --sts or when either side is constant.
	Spearman100 *num      `json:"spearman_x100,omitempty"`
	EvalRank    *rankJSON `json:"evalrank,omitempty"`
	STSPairs    int       `json:"sts_pairs,omitempty"`
	TrainPairs  int       `json:"train_pairs,omitempty"`
	// TrainSeconds is the time of surrogate.Train (including the dev
	// evaluations).
	TrainSeconds   num         `json:"train_seconds,omitempty"`
	FinalTrainLoss *num        `json:"final_train_loss,omitempty"`
	FinalDev       *devJSON    `json:"final_dev,omitempty"`
	Curve          *curveJSON  `json:"curve,omitempty"`
	Encode         *throughput `json:"encode,omitempty"`
	// Origin rows: where they came from and what a pair cost there.
	Source          string `json:"source,omitempty"`
	Similarity      string `json:"similarity,omitempty"`
	GenEvalsPerPair *num   `json:"gen_evals_per_pair,omitempty"`
	Note            string `json:"note,omitempty"`
}

// curvePoint is one point of the learning curve: an objective trained on
// the first Pairs training pairs.
type curvePoint struct {
	Pairs       int       `json:"pairs"`
	Spearman100 *num      `json:"spearman_x100,omitempty"`
	EvalRank    *rankJSON `json:"evalrank,omitempty"`
	DevSpearman *num      `json:"dev_spearman,omitempty"`
	TrainSecs   num       `json:"train_seconds"`
}

type idfInfo struct {
	// Source is "chunks" (the corpus chunks of --chunks) or
	// "sts_sentences" (the distinct sentences of the STS file).
	Source    string `json:"source"`
	Documents int    `json:"documents"`
	Chunks    string `json:"chunks,omitempty"`
	Note      string `json:"note,omitempty"`
}

type results struct {
	SchemaVersion       string         `json:"schema_version"`
	Pairs               []string       `json:"pairs"`
	PairFiles           int            `json:"pair_files"`
	PairsRead           int            `json:"pairs_read"`
	DuplicatesDropped   int            `json:"duplicates_dropped"`
	BySplit             map[string]int `json:"pairs_by_split"`
	Split               []string       `json:"split"`
	DevSplit            string         `json:"dev_split"`
	TrainPairsAvailable int            `json:"train_pairs_available"`
	MaxPairs            []int          `json:"max_pairs"`
	// TrainSizes are the training-set sizes trained at (--max_pairs capped
	// at what is available); TrainPairs is the largest.
	TrainSizes           []int          `json:"train_sizes"`
	TrainPairs           int            `json:"train_pairs"`
	DevPairs             int            `json:"dev_pairs"`
	Model                string         `json:"model"`
	ModelFingerprint     string         `json:"model_fingerprint"`
	TokenizerFingerprint string         `json:"tokenizer_fingerprint"`
	Vocab                int            `json:"vocab"`
	Config               map[string]any `json:"config"`
	// Positives says which training pairs contrastive and multisim took
	// as positives (absent without those objectives).
	Positives    *positivesJSON `json:"positives,omitempty"`
	STS          string         `json:"sts,omitempty"`
	STSPairs     int            `json:"sts_pairs,omitempty"`
	STSSentences int            `json:"sts_sentences,omitempty"`
	IDF          *idfInfo       `json:"idf,omitempty"`
	Tokenize     *throughput    `json:"tokenize,omitempty"`
	Results      []result       `json:"results"`
	// LearningCurve holds, per objective, its STS results at each size.
	LearningCurve map[string][]curvePoint `json:"learning_curve,omitempty"`
	Seconds       map[string]num          `json:"seconds"`
	GOMAXPROCS    int                     `json:"gomaxprocs"`
}
