package surrogatejob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/lexical"
	"github.com/ctxsim/ctxsim/scoring/method"
	"github.com/ctxsim/ctxsim/scoring/stats"
	"github.com/ctxsim/ctxsim/scoring/sts"
	"github.com/ctxsim/ctxsim/scoring/surrogate"
	"github.com/ctxsim/ctxsim/storage"
)

// evalData is an STS file: its distinct sentences, token IDs and TF-IDF
// vectors, and its pairs as indices into them.
type evalData struct {
	pairs []sts.Pair
	sents []string
	ids   [][]int
	gold  []surrogate.GoldPair
	idf   idfInfo
	tfidf *lexical.TFIDF
	tf    []lexical.Vector
}

func loadEval(ctx context.Context, path string, n int, chunks string, tok textVocab) (*evalData, error) {
	all, err := sts.Read(ctx, path)
	if err != nil {
		return nil, err
	}
	pairs := sts.Spread(all, n)
	ev := &evalData{pairs: pairs}
	index := map[string]int{}
	at := func(s string) int {
		i, ok := index[s]
		if !ok {
			i = len(ev.sents)
			index[s] = i
			ev.sents = append(ev.sents, s)
		}
		return i
	}
	for _, p := range pairs {
		ev.gold = append(ev.gold, surrogate.GoldPair{A: at(p.S1), B: at(p.S2), Score: p.Gold})
	}
	ev.ids = surrogate.IDs[int](tok.EncodeBatch(ev.sents))
	var tf *lexical.TFIDF
	if chunks != "" {
		if tf, err = chunkDF(ctx, chunks); err != nil {
			return nil, err
		}
		ev.idf = idfInfo{Source: "chunks", Documents: int(tf.N), Chunks: chunks}
	} else {
		tf = &lexical.TFIDF{}
		for _, s := range ev.sents {
			tf.AddDocument(s)
		}
		ev.idf = idfInfo{Source: "sts_sentences", Documents: len(ev.sents),
			Note: "no --chunks given: IDF counted over the distinct STS sentences themselves, not the corpus"}
	}
	ev.tfidf = tf
	for _, s := range ev.sents {
		ev.tf = append(ev.tf, tf.Vector(s))
	}
	return ev, nil
}

// surrogate fills r with the model's Spearman, EvalRank and throughput.
func (ev *evalData) surrogate(m surrogate.Encoder, r *result) error {
	if err := ev.scoreVectors(encodeRows(m, ev.ids), r); err != nil {
		return err
	}
	r.Encode = encodeThroughput(m, ev.ids)
	return nil
}

// encodeRows encodes sents and returns their embeddings, one row each.
func encodeRows(m surrogate.Encoder, sents [][]int) [][]float32 {
	d := m.Dim()
	flat := m.EncodeBatch(sents, nil)
	rows := make([][]float32, len(sents))
	for i := range rows {
		rows[i] = flat[i*d : (i+1)*d : (i+1)*d]
	}
	return rows
}

// scoreVectors fills r with the STS Spearman of the cosines of emb (one
// vector per distinct sentence) and their EvalRank.
func (ev *evalData) scoreVectors(emb [][]float32, r *result) error {
	pred := make([]float64, len(ev.gold))
	for i, p := range ev.gold {
		pred[i] = surrogate.Cosine(emb[p.A], emb[p.B])
	}
	sp := num(100 * stats.Spearman(pred, ev.goldScores()))
	rr, err := surrogate.EvalRank(emb, ev.gold)
	if err != nil {
		return err
	}
	r.Spearman100, r.EvalRank, r.STSPairs = &sp, rankOf(rr), len(ev.gold)
	return nil
}

func (ev *evalData) tfidfResult() (result, error) {
	pred := make([]float64, len(ev.gold))
	for i, p := range ev.gold {
		pred[i] = ev.tf[p.A].Cosine(ev.tf[p.B])
	}
	sp := num(100 * stats.Spearman(pred, ev.goldScores()))
	rr, err := surrogate.EvalRankFunc(len(ev.tf), func(i, j int) float64 { return ev.tf[i].Cosine(ev.tf[j]) }, ev.gold)
	if err != nil {
		return result{}, err
	}
	note := "unigram TF-IDF cosine, IDF over the corpus chunks"
	if ev.idf.Source != "chunks" {
		note = "unigram TF-IDF cosine, IDF over the STS sentences (no --chunks)"
	}
	return result{Name: "tfidf", Kind: "baseline", Spearman100: &sp, EvalRank: rankOf(rr), STSPairs: len(ev.gold),
		Note: note}, nil
}

func (ev *evalData) goldScores() []float64 {
	g := make([]float64, len(ev.gold))
	for i, p := range ev.gold {
		g[i] = p.Score
	}
	return g
}

// minMeasure is how long a throughput measurement repeats its pass.
const minMeasure = 200 * time.Millisecond

// encodeThroughput times EncodeBatch over sents in the calling goroutine,
// repeating the pass until minMeasure has elapsed, after one warm-up pass.
func encodeThroughput(m surrogate.Encoder, sents [][]int) *throughput {
	buf := m.EncodeBatch(sents, nil)
	tokens := 0
	for _, s := range sents {
		tokens += len(s)
	}
	reps := 0
	t0 := time.Now()
	var el time.Duration
	for el < minMeasure || reps == 0 {
		buf = m.EncodeBatch(sents, buf)
		reps++
		el = time.Since(t0)
	}
	return rate(len(sents), tokens, reps, el)
}

// tokenizeThroughput times tokenizing texts one by one in the calling
// goroutine, after a pass that fills the tokenizer's word cache.
func tokenizeThroughput(tok textVocab, texts []string) *throughput {
	tokens := 0
	for _, s := range texts {
		tokens += len(tok.Encode(s))
	}
	reps := 0
	t0 := time.Now()
	var el time.Duration
	for el < minMeasure || reps == 0 {
		for _, s := range texts {
			tok.Encode(s)
		}
		reps++
		el = time.Since(t0)
	}
	return rate(len(texts), tokens, reps, el)
}

func rate(sents, tokens, reps int, el time.Duration) *throughput {
	s := el.Seconds()
	return &throughput{SentencesPerSecPerCore: num(float64(sents*reps) / s), TokensPerSecPerCore: num(float64(tokens*reps) / s),
		Sentences: sents, Repeats: reps, Seconds: num(s)}
}

// chunkDF counts, over the chunks of the tables matching globs (each
// chunk ID once), the chunks each word occurs in.
func chunkDF(ctx context.Context, globs string) (*lexical.TFIDF, error) {
	tf := &lexical.TFIDF{}
	seen := map[string]bool{}
	for _, g := range jobrun.SplitList(globs) {
		if err := storage.ScanGlob(ctx, g, func(c schemas.Chunk) bool {
			if !seen[c.ID] {
				seen[c.ID] = true
				tf.AddDocument(c.Sentences...)
			}
			return true
		}); err != nil {
			return nil, fmt.Errorf("chunks: %w", err)
		}
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("chunks: no chunks in %s", globs)
	}
	return tf, nil
}

// meanWordVectors is the baseline of bin/evaluate: the cosine of the
// IDF-weighted means of the coherence model's subword embeddings, with the
// IDF of the TF-IDF baseline.
func (ev *evalData) meanWordVectors(m *method.Models) (result, error) {
	emb, dim := m.Disc.SubwordEmbeddings()
	vecs := make([][]float32, len(ev.sents))
	for i, s := range ev.sents {
		v := ev.tfidf.MeanWordVector(emb, dim, m.Tok.Encode, s)
		vecs[i] = make([]float32, len(v))
		for j, x := range v {
			vecs[i][j] = float32(x)
		}
	}
	r := result{Name: "mean_word_vectors", Kind: "baseline",
		Note: "IDF-weighted mean of the coherence model's subword embeddings (" + ev.idf.Source + " IDF)"}
	err := ev.scoreVectors(vecs, &r)
	return r, err
}

// originResults is the part of bin/evaluate's results.json read here.
type originResults struct {
	STS              string `json:"sts"`
	Pairs            int    `json:"pairs"`
	Preset           string `json:"preset"`
	ModelFingerprint string `json:"model_fingerprint"`
	IndexFingerprint string `json:"index_fingerprint"`
	Results          []struct {
		Name            string         `json:"name"`
		Spearman100     *float64       `json:"spearman_x100"`
		Eq4Spearman100  *float64       `json:"eq4_spearman_x100"`
		Labeler         string         `json:"labeler"`
		GenEvalsPerPair *float64       `json:"gen_evals_per_pair"`
		Settings        map[string]any `json:"settings"`
	} `json:"results"`
}

// readOrigin reads the Origin rows (every variant, not the baselines) of
// each bin/evaluate output directory, after checking that its pairs.tsv
// holds exactly the STS pairs evaluated here, in the same order.
func readOrigin(ctx context.Context, dirs []string, ev *evalData) ([]result, error) {
	var out []result
	for _, dir := range dirs {
		b, err := storage.ReadFile(ctx, storage.Join(dir, "results.json"))
		if err != nil {
			return nil, fmt.Errorf("--origin: %w", err)
		}
		var or originResults
		if err := json.Unmarshal(b, &or); err != nil {
			return nil, fmt.Errorf("--origin %s: results.json: %w", dir, err)
		}
		tsv, err := storage.ReadFile(ctx, storage.Join(dir, "pairs.tsv"))
		if err != nil {
			return nil, fmt.Errorf("--origin: %w", err)
		}
		if err := samePairs(tsv, ev.pairs); err != nil {
			return nil, fmt.Errorf("--origin %s: its STS pairs (%d from %s) are not the %d evaluated here "+
				"(use the same STS file, and --sts_pairs as its --pairs): %w", dir, or.Pairs, or.STS, len(ev.pairs), err)
		}
		for _, v := range or.Results {
			if v.Eq4Spearman100 == nil {
				continue // a baseline: computed here, on the same pairs
			}
			// Each variant gives its Origin row (Eq. 4 alone) and, under
			// another labeler (hybrid, ensemble, aligned), a row of that
			// labeler.
			rows := []struct {
				kind string
				sp   float64
			}{{"origin", *v.Eq4Spearman100}}
			if v.Labeler != "" && v.Labeler != "origin" && v.Spearman100 != nil {
				rows = append(rows, struct {
					kind string
					sp   float64
				}{v.Labeler, *v.Spearman100})
			}
			for _, row := range rows {
				name := row.kind
				if v.Name != "origin" {
					name += ":" + v.Name
				}
				if len(dirs) > 1 {
					name = filepath.Base(strings.TrimRight(dir, "/")) + "/" + name
				}
				r := result{Name: name, Kind: row.kind, Source: dir, STSPairs: or.Pairs,
					Note: fmt.Sprintf("bin/evaluate variant %s, preset %s, models %s, index %s", v.Name, or.Preset,
						or.ModelFingerprint, or.IndexFingerprint)}
				sp := num(row.sp)
				r.Spearman100 = &sp
				if v.GenEvalsPerPair != nil {
					g := num(*v.GenEvalsPerPair)
					r.GenEvalsPerPair = &g
				}
				if sim, ok := v.Settings["similarity"].(string); ok {
					r.Similarity = sim
				}
				out = append(out, r)
			}
		}
	}
	return out, nil
}

// samePairs checks that the s1 and s2 columns (the last two) of
// bin/evaluate's pairs.tsv are want's sentences, pair by pair.
func samePairs(tsv []byte, want []sts.Pair) error {
	lines := strings.Split(strings.TrimRight(string(tsv), "\n"), "\n")
	if len(lines) < 1 {
		return errors.New("pairs.tsv is empty")
	}
	lines = lines[1:] // header
	if len(lines) != len(want) {
		return fmt.Errorf("pairs.tsv has %d pairs", len(lines))
	}
	for i, l := range lines {
		cols := strings.Split(l, "\t")
		if len(cols) < 3 {
			return fmt.Errorf("pairs.tsv line %d: %d columns", i+2, len(cols))
		}
		s1, s2 := cols[len(cols)-2], cols[len(cols)-1]
		if s1 != want[i].S1 || s2 != want[i].S2 {
			return fmt.Errorf("pair %d is %q / %q there, %q / %q here", i+1, s1, s2, want[i].S1, want[i].S2)
		}
	}
	return nil
}
