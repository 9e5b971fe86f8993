package surrogatejob

import (
	"context"
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/ctxsim/ctxsim/pipelines/internal/jobrun"
)

// defaults returns the configuration of a command line that sets no flag.
func defaults(t *testing.T) Config {
	t.Helper()
	var c Config
	if err := jobrun.ParseArgs(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRegister(t *testing.T) {
	c := defaults(t)
	if c.Objective != "l2" || c.Dim != 300 || c.Epochs != 5 || c.BatchSize != 128 || c.LR != 0.001 || c.Seed != 1 ||
		c.Split != "train" || c.DevSplit != "dev" || c.MaxPairs != "0" || c.Threshold != 0 || c.Positives != DefaultPositives || c.Encoder != "mean" ||
		c.Init != "random" || c.Tokens != "auto" || c.Pairs != "" || c.Load != "" || c.Decay {
		t.Fatalf("defaults: %+v", c)
	}
	var got Config
	fs := flag.NewFlagSet("surrogate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	got.Register(fs)
	err := fs.Parse([]string{"--pairs=p/*.parquet", "--model=m", "--output=o", "--objective=l2,multisim", "--dim=16",
		"--epochs=2", "--batch_size=4", "--lr=0.01", "--seed=9", "--dev_split=", "--max_pairs=5,10", "--top_quantile=0.2",
		"--sts=s.tsv", "--sts_pairs=6", "--tokens=subword", "--decay"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Pairs != "p/*.parquet" || got.Model != "m" || got.Output != "o" || got.Objective != "l2,multisim" || got.Dim != 16 ||
		got.Epochs != 2 || got.BatchSize != 4 || got.LR != 0.01 || got.Seed != 9 || got.DevSplit != "" || got.MaxPairs != "5,10" ||
		got.TopQuantile != 0.2 || got.STS != "s.tsv" || got.STSPairs != 6 || got.Tokens != "subword" || !got.Decay {
		t.Fatalf("parsed: %+v", got)
	}
	if fs.Parse([]string{"--no_such_flag"}) == nil {
		t.Fatal("an unknown flag parsed")
	}
}

// TestRunRejectsBadFlags checks that Run names the flag at fault before it
// reads any file: the paths below do not exist.
func TestRunRejectsBadFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"embed without load", func(c *Config) { c.Embed = "x.txt" }, "--embed and --score apply a trained surrogate"},
		{"load without embed or score", func(c *Config) { c.Load = "x" }, "--load: give --embed"},
		{"load without model", func(c *Config) { c.Load, c.Score, c.Model = "x", "x.tsv", "" }, "--load needs --model"},
		{"unknown objective", func(c *Config) { c.Objective = "l2,cosine" }, "unknown objective"},
		{"objective twice", func(c *Config) { c.Objective = "l2,l2" }, "--objective: l2 given twice"},
		{"no objective", func(c *Config) { c.Objective = " , " }, "--objective: name at least one"},
		{"bad max_pairs", func(c *Config) { c.MaxPairs = "10,x" }, `--max_pairs "10,x"`},
		{"negative sts_pairs", func(c *Config) { c.STSPairs = -1 }, "--sts_pairs -1"},
		{"origin without sts", func(c *Config) { c.Origin = "e" }, "--origin needs --sts"},
		{"unknown init", func(c *Config) { c.Init = "zeros" }, `--init "zeros"`},
		{"unknown encoder", func(c *Config) { c.Encoder = "lstm" }, `--encoder "lstm"`},
		{"unknown label", func(c *Config) { c.Label = "cosine" }, `unknown column "cosine"`},
		{"label weight zero", func(c *Config) { c.Label = "align:0,embed:1" }, "the weight of align must be a nonzero number"},
		{"negative anchor", func(c *Config) { c.Anchor = -0.5 }, "--anchor -0.5"},
		{"negative weight_lr", func(c *Config) { c.WeightLR = -1 }, "--weight_lr -1"},
		{"bilstm with weight_lr", func(c *Config) { c.Encoder, c.WeightLR = "bilstm", 0.01 }, "--weight_lr trains the mean encoder's word weights"},
		{"interpolate zero", func(c *Config) { c.Interpolate = 0 }, "--interpolate 0"},
		{"interpolate above two", func(c *Config) { c.Interpolate = 2.5 }, "--interpolate 2.5"},
		{"bilstm with interpolate", func(c *Config) { c.Encoder, c.Interpolate = "bilstm", 0.5 }, "--interpolate mixes the mean encoder's table"},
		{"bilstm with anchor", func(c *Config) { c.Encoder, c.Anchor = "bilstm", 1 }, "--anchor holds the mean encoder's table"},
		{"bilstm with dim", func(c *Config) { c.Encoder, c.DimGiven = "bilstm", true }, "--dim and --init do not apply"},
		{"no split", func(c *Config) { c.Split = "," }, "--split: name at least one split"},
		{"split overlaps dev", func(c *Config) { c.Split = "train,dev" }, "--split train,dev and --dev_split dev overlap"},
		{"missing model", func(c *Config) {}, "no-model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := defaults(t)
			c.Pairs, c.Model, c.Output = dir+"/none/*.parquet", dir+"/no-model", dir+"/out"
			tc.edit(&c)
			err := Run(context.Background(), c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
