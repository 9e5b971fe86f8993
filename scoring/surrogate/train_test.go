package surrogate

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// Synthetic task: each sentence is about one or two of numTopics topics.
// It has four words drawn in turn from its topics' vocabularies, which are
// large,
// so sentences on one topic rarely share a word, and four filler words
// shared by all topics. The label is 2·Jaccard(topics) − 1. A random
// encoder sees mostly the filler words; a trained one must learn which
// words belong to the same topic.
const (
	numTopics     = 8
	wordsPerTopic = 20
	numFiller     = 10
	topicWords    = 4
	fillerWords   = 4
	synthVocab    = numFiller + numTopics*wordsPerTopic
)

type synthSentence struct {
	topics []int
	ids    []int
}

func synthSent(rng *rand.Rand, topics []int) synthSentence {
	s := synthSentence{topics: topics}
	for i := range topicWords {
		t := topics[i%len(topics)]
		s.ids = append(s.ids, numFiller+t*wordsPerTopic+rng.IntN(wordsPerTopic))
	}
	for range fillerWords {
		s.ids = append(s.ids, rng.IntN(numFiller))
	}
	return s
}

func randomTopics(rng *rand.Rand) []int {
	t := []int{rng.IntN(numTopics)}
	if rng.IntN(2) == 0 {
		if u := rng.IntN(numTopics); u != t[0] {
			t = append(t, u)
		}
	}
	return t
}

func jaccard(a, b []int) float64 {
	inter := 0
	for _, x := range a {
		if slices.Contains(b, x) {
			inter++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// synthPairs returns n pairs; in half of them the second sentence shares
// the first's topics, in a quarter one of them.
func synthPairs(seed uint64, n int) []Pair {
	rng := rand.New(rand.NewPCG(seed, 17))
	pairs := make([]Pair, n)
	for i := range pairs {
		a := synthSent(rng, randomTopics(rng))
		var tb []int
		switch rng.IntN(4) {
		case 0, 1:
			tb = slices.Clone(a.topics)
		case 2:
			tb = []int{a.topics[rng.IntN(len(a.topics))]}
		default:
			tb = randomTopics(rng)
		}
		b := synthSent(rng, tb)
		pairs[i] = Pair{A: a.ids, B: b.ids, Label: float32(2*jaccard(a.topics, b.topics) - 1)}
	}
	return pairs
}

func synthConfig(objective string) TrainConfig {
	cfg := DefaultTrainConfig(synthVocab)
	cfg.Model.Dim = 32
	cfg.Objective = DefaultObjective(objective)
	cfg.Epochs = 6
	cfg.BatchSize = 32
	cfg.LR = 0.01
	cfg.Seed = 7
	return cfg
}

func TestTrainSynthetic(t *testing.T) {
	train, dev := synthPairs(1, 2000), synthPairs(2, 400)
	// The thresholded objectives do not rank the labels below the threshold
	// against each other, which caps their Spearman correlation on this task.
	minSpearman := map[string]float64{ObjectiveL2: 0.75, ObjectiveContrastive: 0.75, ObjectiveMultiSim: 0.55}
	for _, name := range []string{ObjectiveL2, ObjectiveContrastive, ObjectiveMultiSim} {
		t.Run(name, func(t *testing.T) {
			var seen []int
			cfg := synthConfig(name)
			cfg.Progress = func(s EpochStats) { seen = append(seen, s.Epoch) }
			m, curve, err := Train(cfg, train, dev)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(seen, []int{1, 2, 3, 4, 5, 6}) || len(curve.Epochs) != 6 {
				t.Fatalf("progress %v, curve of %d epochs", seen, len(curve.Epochs))
			}
			first, last := curve.Epochs[0], curve.Epochs[len(curve.Epochs)-1]
			t.Logf("init dev spearman %.3f loss %.4f; epoch 1 train loss %.4f dev spearman %.3f; epoch %d train loss %.4f dev spearman %.3f pearson %.3f",
				curve.Init.Spearman, curve.Init.Loss, first.TrainLoss, first.Dev.Spearman, last.Epoch, last.TrainLoss, last.Dev.Spearman, last.Dev.Pearson)
			if !(last.TrainLoss < 0.85*first.TrainLoss) || !(last.Dev.Loss < curve.Init.Loss) {
				t.Errorf("loss did not fall: train %.4f -> %.4f, dev %.4f -> %.4f",
					first.TrainLoss, last.TrainLoss, curve.Init.Loss, last.Dev.Loss)
			}
			if !(last.Dev.Spearman > minSpearman[name] && last.Dev.Spearman > curve.Init.Spearman+0.3) {
				t.Errorf("dev Spearman %.3f at init, %.3f after training", curve.Init.Spearman, last.Dev.Spearman)
			}
			if sp, _ := m.Correlation(dev); sp != last.Dev.Spearman {
				t.Errorf("Correlation %v, curve %v", sp, last.Dev.Spearman)
			}
		})
	}
}

func TestTrainDeterministic(t *testing.T) {
	train := synthPairs(3, 300)
	cfg := synthConfig(ObjectiveMultiSim)
	cfg.Epochs = 2
	a, ca, err := Train(cfg, train, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, cb, err := Train(cfg, train, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Emb.Value.Data, b.Emb.Value.Data) || ca.Epochs[1].TrainLoss != cb.Epochs[1].TrainLoss {
		t.Error("same seed, different models")
	}
	if ca.Init != nil || ca.Epochs[0].Dev != nil {
		t.Error("dev metrics without dev pairs")
	}
	cfg.Seed++
	c, _, err := Train(cfg, train, nil)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(a.Emb.Value.Data, c.Emb.Value.Data) {
		t.Error("different seeds, same model")
	}
}

func TestTrainRejectsBadInput(t *testing.T) {
	good := synthPairs(4, 10)
	cfg := synthConfig(ObjectiveL2)
	cases := map[string]struct {
		cfg   func(*TrainConfig)
		pairs func([]Pair) []Pair
		dev   []Pair
		want  string
	}{
		"no pairs":     {pairs: func([]Pair) []Pair { return nil }, want: "no training pairs"},
		"empty":        {pairs: func(p []Pair) []Pair { p[3].B = nil; return p }, want: "pair 3: sentence 2 is empty"},
		"token":        {pairs: func(p []Pair) []Pair { p[2].A = []int{1, synthVocab}; return p }, want: "pair 2: sentence 1 has token id 170"},
		"label":        {pairs: func(p []Pair) []Pair { p[1].Label = 1.5; return p }, want: "pair 1: label 1.5"},
		"nan label":    {pairs: func(p []Pair) []Pair { p[0].Label = float32(math.NaN()); return p }, want: "pair 0: label NaN"},
		"dev":          {dev: []Pair{{A: []int{1}, B: []int{-1}}}, want: "dev: surrogate: pair 0"},
		"batch size":   {cfg: func(c *TrainConfig) { c.BatchSize = 0 }, want: "batch size 0"},
		"objective":    {cfg: func(c *TrainConfig) { c.Objective.Name = "cos" }, want: `unknown objective "cos"`},
		"model config": {cfg: func(c *TrainConfig) { c.Model.Dim = 0 }, want: "dim 0"},
		"init table":   {cfg: func(c *TrainConfig) { c.InitTable = make([]float32, 7) }, want: "initial table of 7 values"},
		"anchor":       {cfg: func(c *TrainConfig) { c.Anchor = -1 }, want: "anchor -1"},
	}
	for name, c := range cases {
		cf := cfg
		if c.cfg != nil {
			c.cfg(&cf)
		}
		pairs := slices.Clone(good)
		if c.pairs != nil {
			pairs = c.pairs(pairs)
		}
		if _, _, err := Train(cf, pairs, c.dev); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", name, err, c.want)
		}
	}
}

// TestTrainInitTable checks that training starts from a given table: with
// no epochs the model is that table, unchanged, and the source is kept.
func TestTrainInitTable(t *testing.T) {
	train := synthPairs(5, 50)
	cfg := synthConfig(ObjectiveL2)
	cfg.Epochs = 0
	init := make([]float32, cfg.Model.Vocab*cfg.Model.Dim)
	for i := range init {
		init[i] = float32(i%17) - 8
	}
	cfg.InitTable, cfg.InitSource = init, "test"
	m, _, err := Train(cfg, train, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Emb.Value.Data, init) {
		t.Fatal("with no epochs the model should be the initial table")
	}
	m.Emb.Value.Data[0] = 99
	if init[0] == 99 {
		t.Fatal("the model shares the caller's table")
	}
	cfg.Epochs = 1
	m1, _, err := Train(cfg, train, nil)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(m1.Emb.Value.Data, init) {
		t.Fatal("an epoch from the initial table changed nothing")
	}
}

// TestTrainAnchor checks the anchor (L2-SP): its gradient is that of
// Anchor/2·‖E − E₀‖² over the batch's rows, and a strong anchor keeps the
// trained table nearer its start than no anchor does.
func TestTrainAnchor(t *testing.T) {
	cfg := synthConfig(ObjectiveL2)
	m, err := cfg.Initial()
	if err != nil {
		t.Fatal(err)
	}
	net := newMeanNet(m, cfg.LR)
	net.anchor, net.start = 0.5, slices.Clone(m.Emb.Value.Data)
	batch := synthPairs(6, 4)
	d := m.Cfg.Dim
	moved := batch[0].A[0]
	for k := range d {
		m.Emb.Value.Data[moved*d+k] += float32(k%5) * 0.1
	}
	tr, err := newTrainer(net, cfg.Objective)
	if err != nil {
		t.Fatal(err)
	}
	tr.gradient(batch)
	with := slices.Clone(net.grad.Row(moved))
	net.anchor = 0
	tr.gradient(batch)
	without := net.grad.Row(moved)
	for k := range d {
		want := 0.5 * float32(k%5) * 0.1
		if got := with[k] - without[k]; math.Abs(float64(got-want)) > 1e-5 {
			t.Fatalf("column %d: the anchor adds %v to the gradient, want %v", k, got, want)
		}
	}

	train := synthPairs(7, 500)
	dist := func(anchor float64) float64 {
		c := synthConfig(ObjectiveL2)
		c.Epochs, c.Anchor = 3, anchor
		start, err := c.Initial()
		if err != nil {
			t.Fatal(err)
		}
		m, _, err := Train(c, train, nil)
		if err != nil {
			t.Fatal(err)
		}
		var ss float64
		for i, v := range m.Emb.Value.Data {
			x := float64(v - start.Emb.Value.Data[i])
			ss += x * x
		}
		return math.Sqrt(ss)
	}
	free, held := dist(0), dist(50)
	if !(held < 0.5*free) {
		t.Fatalf("distance from the start: %v with a strong anchor, %v without", held, free)
	}
}
