package surrogatejob

import (
	"errors"
	"flag"

	"github.com/ctxsim/ctxsim/scoring/sts"
	"github.com/ctxsim/ctxsim/scoring/surrogate"
)

// Usage is the job's description, printed by -help above the flags.
const Usage = `
surrogate: harvested pairs -> averaged-token sentence encoders -> STS
Spearman and EvalRank beside a TF-IDF baseline.

Reads the harvest's pairs table (schemas.LabeledPair), tokenizes the sentences
as --tokens says with the harvest's model directory (the pairs' model
fingerprint must match it): by default into the contrastive model's words or
stems when the directory holds one (train's default), else with its subword
tokenizer. It trains one encoder per objective (l2: the paper's
squared error on cosine; rank: a pairwise ranking loss on cosines, which
uses only the labels' order; contrastive: InfoNCE with positives; multisim:
locality-weighted multi-similarity) on the pairs of
--split, with the pairs of --dev_split for the learning curve, and saves each
under --output/<objective>/ (surrogate.json + surrogate.safetensors; with
--encoder=bilstm, the fine-tuned coherence model as disc.json +
disc.safetensors). With a list of sizes in --max_pairs, each objective is
trained at each size, saved as <objective>-<size>/, and the learning curve
is printed.

The positives of contrastive and multisim are, by default, the top
--positives fraction (10%) of the training pairs by label: the threshold
is that quantile of the labels, printed with the number of positives and
recorded in results.json ("positives"). An explicit --threshold sets it
instead (the labels' scale depends on the labeler: the demo's top out near
0.64), and --top_quantile takes the top fraction of each batch. Fewer than
100 positives, or less than one per batch on average, gives a warning.

With --sts (a TSV with a header and the columns score, s1, s2, as
stsb-dev.tsv), every encoder, the unigram TF-IDF cosine baseline and the
untrained encoder (random embeddings, which already reward word overlap)
are evaluated on the same pairs: Spearman x100 of cosine against the gold scores,
and EvalRank (MRR, Hits@1, Hits@3) over the file's distinct sentences. The
TF-IDF IDF is counted over the corpus chunks of --chunks, or over the STS
sentences themselves when --chunks is not given.

With --origin, the rows of bin/evaluate runs on the same STS pairs (Origin
and its variants) join the table.

Apply mode: with --load=<output>/<objective>, the job trains nothing. It
writes the embedding of every line of --embed to
--output/embeddings.parquet, and the cosine of every pair of --score to
--output/scores.tsv.

Writes --output/results.json: the data used, each encoder's training curve,
time and encoding throughput (sentences/s on one core), and the table.`

// Config is the job's command line: one field per flag (Register binds
// them), and whether --dim and --init were given explicitly.
type Config struct {
	Pairs       string
	Model       string
	Output      string
	Objective   string
	Dim         int
	Epochs      int
	BatchSize   int
	LR          float64
	Anchor      float64
	WeightLR    float64
	Decay       bool
	Interpolate float64
	Seed        uint64
	Split       string
	DevSplit    string
	Strata      string
	Label       string
	MaxPairs    string
	Threshold   float64
	Positives   float64
	TopQuantile float64
	STS         string
	Chunks      string
	STSPairs    int
	Origin      string
	Load        string
	Embed       string
	Score       string
	Encoder     string
	Init        string
	Tokens      string

	// DimGiven and InitGiven report whether --dim and --init were set on
	// the command line rather than left at their defaults: an explicit
	// --dim must match the width of --init's table, and neither applies
	// to --encoder=bilstm.
	DimGiven, InitGiven bool
	// ThresholdGiven reports whether --threshold was given: otherwise the
	// positives are the top Positives fraction of the training pairs.
	ThresholdGiven bool
}

// Register binds each flag of the job to its field of c, with its default
// and help text.
func (c *Config) Register(fs *flag.FlagSet) {
	fs.StringVar(&c.Pairs, "pairs", "", "Harvested pairs table: comma-separated Parquet globs or directories, local or gs:// (required).")
	fs.StringVar(&c.Model, "model", "", "The harvest's model directory, local or gs://, for its tokens (see --tokens; required).")
	fs.StringVar(&c.Output, "output", "", "Directory for <objective>/ models and results.json, local or gs:// (required).")
	fs.StringVar(&c.Objective, "objective", surrogate.ObjectiveL2, "Objective, or a comma-separated list trained side by side: l2, pearson, rank, contrastive, multisim.")
	fs.IntVar(&c.Dim, "dim", 300, "Width of the token and sentence embeddings.")
	fs.IntVar(&c.Epochs, "epochs", 5, "Passes over the training pairs.")
	fs.IntVar(&c.BatchSize, "batch_size", 128, "Pairs per minibatch (contrastive and multisim draw their negatives from the batch).")
	fs.Float64Var(&c.LR, "lr", 0.001, "Adam learning rate (small label sets train faster at 0.01).")
	fs.Float64Var(&c.Anchor, "anchor", 0, "Mean encoder: hold the table near its start (L2-SP), adding anchor·(E − E₀) to the gradient of every row a batch touches (0: off).")
	fs.BoolVar(&c.Decay, "decay", false, "Let the learning rates fall linearly over the run's steps, from --lr (and --weight_lr) at the first step towards 0 at the last, instead of staying constant.")
	fs.Float64Var(&c.WeightLR, "weight_lr", 0, "Mean encoder over --tokens=ctx: also learn each word's weight in the sentence's mean (they start at the words' IDF), in log space by Adam at this rate (0: the weights stay fixed).")
	fs.Float64Var(&c.Interpolate, "interpolate", 1, "Mean encoder: the saved table is start + interpolate·(trained − start), in (0, 2]: below 1 back towards the start (WiSE-FT style), above 1 beyond the trained table; every sentence vector is the same mix of its start and trained vectors; word weights learned with --weight_lr move the same way in log space (1: the trained table).")
	fs.Uint64Var(&c.Seed, "seed", 1, "Seed of the initial embeddings and the batch order: same data and seed give identical weights.")
	fs.StringVar(&c.Split, "split", "train", "Comma-separated splits of the pairs table to train on.")
	fs.StringVar(&c.DevSplit, "dev_split", "dev", "Split whose pairs give the learning curve (empty: none).")
	fs.StringVar(&c.Label, "label", "label", "Column the encoders learn: label (the harvest's labels), or one of the parts it records: align, embed, context, lexical; or a weighted mean of several, as align:3,embed:1 (a negative weight moves the target away from that part; the weights must add up to a positive number).")
	fs.StringVar(&c.Strata, "strata", "", "Comma-separated strata to train and follow the curve on (near, mid, far, random: how the harvest sampled each pair); empty: all.")
	fs.StringVar(&c.MaxPairs, "max_pairs", "0", "Train on the first N training pairs in pair-ID order (0: all); a comma-separated list of sizes trains every objective at each, for a learning curve.")
	fs.Float64Var(&c.Threshold, "threshold", 0, "contrastive and multisim: pairs labelled at least this are positives (default: the label above which --positives of the training pairs lie).")
	fs.Float64Var(&c.Positives, "positives", DefaultPositives, "contrastive and multisim, without --threshold: the fraction of the training pairs, the best labelled, that are positives.")
	fs.Float64Var(&c.TopQuantile, "top_quantile", 0, "contrastive and multisim: if positive, the top fraction of each batch by label are the positives instead of --threshold.")
	fs.StringVar(&c.STS, "sts", "", "STS file with gold scores to evaluate on, local or gs:// (optional): "+sts.Formats+".")
	fs.StringVar(&c.Chunks, "chunks", "", "Chunks table glob(s) for the TF-IDF IDF (optional; default: IDF over the STS sentences).")
	fs.IntVar(&c.STSPairs, "sts_pairs", 0, "Evaluate on N STS pairs spread evenly over the file, as bin/evaluate --pairs=N picks them (0: all).")
	fs.StringVar(&c.Origin, "origin", "", "Comma-separated bin/evaluate output directories whose Origin rows join the table; their STS pairs must be the ones evaluated here.")
	fs.StringVar(&c.Load, "load", "", "Apply mode: a trained surrogate directory (<output>/<objective>); with --model and --output, encodes --embed or scores --score instead of training.")
	fs.StringVar(&c.Embed, "embed", "", "With --load: a text file, one sentence per line; writes <output>/embeddings.parquet (line, sentence, embedding).")
	fs.StringVar(&c.Score, "score", "", "With --load: a TSV of sentence pairs (columns s1 and s2 under a header, as STS files, else the first two); writes <output>/scores.tsv (score, s1, s2).")
	fs.StringVar(&c.Encoder, "encoder", "mean", "Encoder: mean (averaged token embeddings) or bilstm (the coherence model's BiLSTM encoder, fine-tuned; slower).")
	fs.StringVar(&c.Init, "init", "random", "Initial token embeddings: random (N(0, 0.1²) at --dim), coherence (the coherence model's subword embeddings), ctx (the contrastive model's sentence-encoder embeddings) or ctx_words (its word vectors as the alignment compares them: the unit sums of its sentence and context tables' rows), at their width.")
	fs.StringVar(&c.Tokens, "tokens", "auto", "Tokens of the mean encoder: subword (the model directory's tokenizer), ctx (the contrastive model's words or stems, the mean weighted by their IDF), or auto (ctx when the directory has a contrastive model).")
}

// ApplyMode reports whether c asks for the apply mode (--load): encode or
// score with a trained surrogate instead of training.
func (c *Config) ApplyMode() bool { return c.Load != "" }

// CheckMode fails when c mixes the modes: --embed and --score belong to
// the apply mode.
func (c *Config) CheckMode() error {
	if !c.ApplyMode() && (c.Embed != "" || c.Score != "") {
		return errors.New("--embed and --score apply a trained surrogate: name it with --load")
	}
	return nil
}
