// Package schemas defines the records that flow between ctxsim's stages,
// their Parquet layout, and the schema version written into every file.
//
// The package is plain Go: it imports neither Beam nor the models, so every
// other package may depend on it.
package schemas

// Version is the schema version of every record in this package. It is
// written into the key/value metadata of each Parquet file (MetaVersionKey)
// and into the metadata of every index. Bump it when a record's layout
// changes in a way old readers cannot follow.
const Version = "ctxsim/v2"

// Document is one document of the corpus: a title and its paragraphs.
type Document struct {
	DocID      string   `parquet:"doc_id" json:"doc_id"`
	Source     string   `parquet:"source" json:"source"`
	Title      string   `parquet:"title" json:"title"`
	Paragraphs []string `parquet:"paragraphs,list" json:"paragraphs"`
	// Origin says where the document was read: "file:line" for JSONL,
	// the file name for plain text.
	Origin string `parquet:"origin" json:"origin,omitempty"`
}

// Sentence is one sentence of a document, after splitting and normalisation.
type Sentence struct {
	// ID is stable across runs: a hash of the document ID, the position and
	// the text (see corpus.SentenceID).
	ID    string `parquet:"sentence_id" json:"sentence_id"`
	DocID string `parquet:"doc_id" json:"doc_id"`
	// Pos is the sentence's index within its document, from 0.
	Pos int32 `parquet:"pos" json:"pos"`
	// Paragraph is the index of the paragraph the sentence came from.
	Paragraph int32  `parquet:"paragraph" json:"paragraph"`
	Text      string `parquet:"text" json:"text"`
	// ChunkIDs lists the chunks that contain this sentence, so that a query
	// made from it can exclude its own chunks.
	ChunkIDs []string `parquet:"chunk_ids,list" json:"chunk_ids"`
}

// Chunk is a window of consecutive sentences of one document: the unit of
// retrieval. Every slot of a chunk is a candidate context.
type Chunk struct {
	ID    string `parquet:"chunk_id" json:"chunk_id"`
	DocID string `parquet:"doc_id" json:"doc_id"`
	// Start is the position of the chunk's first sentence in its document.
	Start       int32    `parquet:"start" json:"start"`
	SentenceIDs []string `parquet:"sentence_ids,list" json:"sentence_ids"`
	Sentences   []string `parquet:"sentences,list" json:"sentences"`
}

// Text returns the chunk's sentences joined by single spaces: the text that
// is indexed.
func (c *Chunk) Text() string {
	n := 0
	for _, s := range c.Sentences {
		n += len(s) + 1
	}
	b := make([]byte, 0, n)
	for i, s := range c.Sentences {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, s...)
	}
	return string(b)
}

// Key returns the sentence's identity.
func (s Sentence) Key() string { return s.ID }

// Key returns the chunk's identity.
func (c Chunk) Key() string { return c.ID }

// Hit is one retrieved chunk with its TF-IDF score. Scores are comparable
// across the shards of one index and across queries' hits lists.
type Hit struct {
	ChunkID string  `parquet:"chunk_id" json:"chunk_id"`
	Score   float32 `parquet:"score" json:"score"`
}

// Retrieval is the result of one query: the top-K hits, best first.
type Retrieval struct {
	SentenceID string `parquet:"sentence_id" json:"sentence_id"`
	Text       string `parquet:"text" json:"text"`
	// Excluded counts hits that were dropped because they are chunks of
	// the query sentence's own document position.
	Excluded int32 `parquet:"excluded" json:"excluded"`
	Hits     []Hit `parquet:"hits,list" json:"hits"`
	// IndexFingerprint identifies the index that answered.
	IndexFingerprint string `parquet:"index_fingerprint" json:"index_fingerprint"`
}

// Key returns the query sentence's identity.
func (r Retrieval) Key() string { return r.SentenceID }

// Context is a chunk with one slot cut out: the sentences left of the slot
// and right of it. A sentence fits the context when left+s+right is coherent.
type Context struct {
	ChunkID string   `parquet:"chunk_id" json:"chunk_id"`
	Slot    int32    `parquet:"slot" json:"slot"`
	Left    []string `parquet:"left,list" json:"left"`
	Right   []string `parquet:"right,list" json:"right"`
}

// ScoredContext is a context reference with the score S(s, c) of a sentence.
type ScoredContext struct {
	ChunkID string `parquet:"chunk_id" json:"chunk_id"`
	// Slot is the index, in the chunk, of the sentence cut out.
	Slot  int32   `parquet:"slot" json:"slot"`
	Score float32 `parquet:"score" json:"score"`
	// Terms are the terms of Eq. 3 before weighting, in the order of the
	// context set's Terms (for example the contrastive score, or
	// log p(y=1 | c, s) and the length-normalised log-likelihoods of s,
	// c_<i and c_>i).
	Terms []float32 `parquet:"terms,list" json:"terms"`
}

// ContextSet is C_s: the diversity-constrained set of contexts chosen for a
// sentence, best first.
type ContextSet struct {
	SentenceID string `parquet:"sentence_id" json:"sentence_id"`
	Text       string `parquet:"text" json:"text"`
	// Terms names the terms each context's Terms holds.
	Terms    []string        `parquet:"terms,list" json:"terms"`
	Contexts []ScoredContext `parquet:"contexts,list" json:"contexts"`
}

// LabeledPair is one harvested label with its provenance.
type LabeledPair struct {
	PairID      string  `parquet:"pair_id" json:"pair_id"`
	SentenceID1 string  `parquet:"sentence_id1" json:"sentence_id1"`
	SentenceID2 string  `parquet:"sentence_id2" json:"sentence_id2"`
	Sentence1   string  `parquet:"sentence1" json:"sentence1"`
	Sentence2   string  `parquet:"sentence2" json:"sentence2"`
	Label       float32 `parquet:"label" json:"label"`
	// LabelContext is Eq. 4 over the two context sets and LabelLexical the
	// TF-IDF cosine of the two sentences' Porter stems; Label is the first
	// (labeler "origin") or their combination (labeler "hybrid").
	LabelContext float32 `parquet:"label_context" json:"label_context"`
	LabelLexical float32 `parquet:"label_lexical" json:"label_lexical"`
	// LabelEmbed is the context model's own sentence similarity (labeler
	// "ensemble", which averages the three parts); 0 when no loaded model
	// embeds sentences. Files written before the column existed read as 0.
	LabelEmbed float32 `parquet:"label_embed" json:"label_embed"`
	// LabelAlign is the word alignment of the two sentences under the
	// context model (labeler "aligned"); 0 when no loaded model aligns
	// words. Files written before the column existed read as 0.
	LabelAlign float32 `parquet:"label_align" json:"label_align"`
	// Split is "train", "dev" or "test", chosen from the pair's hash.
	Split string `parquet:"split" json:"split"`
	// Stratum says how the pair was sampled: "near", "mid" or "far" by the
	// retrieval rank linking the two sentences, or "random".
	Stratum          string `parquet:"stratum" json:"stratum"`
	NumContexts      int32  `parquet:"num_contexts" json:"num_contexts"`
	ModelFingerprint string `parquet:"model_fingerprint" json:"model_fingerprint"`
	IndexFingerprint string `parquet:"index_fingerprint" json:"index_fingerprint"`
	// Settings is the JSON of the harvest settings that produced the label.
	Settings string `parquet:"settings" json:"settings"`
	// ContextsDigest identifies the two context sets the label was
	// computed from (sentences, chunks and slots), so that a refresh can
	// tell whether a label would come out the same.
	ContextsDigest string `parquet:"contexts_digest" json:"contexts_digest"`
}

// TrainingPair is a labeled pair as a sentence-similarity trainer reads
// it: the two sentences and a score in [0, 1] and nothing else, so that a
// trainer that feeds every column but the label to the model (the
// sentence-transformers trainer does) gets the two texts. A harvest
// writes one table of them per split (export/train, export/dev,
// export/test); Score is the pair's label clipped to [0, 1] (see
// MetaScoreKey).
type TrainingPair struct {
	Sentence1 string  `parquet:"sentence1" json:"sentence1"`
	Sentence2 string  `parquet:"sentence2" json:"sentence2"`
	Score     float32 `parquet:"score" json:"score"`
}

// Key returns the pair's identity: its two texts.
func (p TrainingPair) Key() string { return p.Sentence1 + "\x00" + p.Sentence2 }

// DeadLetter is a record that could not be processed, with the reason.
// Nothing is dropped silently: every input either flows on or ends here.
type DeadLetter struct {
	// Stage names the step that rejected the record ("ingest", "retrieve").
	Stage string `parquet:"stage" json:"stage"`
	// Source is the file (or other origin) the record came from.
	Source string `parquet:"source" json:"source"`
	// Line is the 1-based line in Source, or 0 when not line-oriented.
	Line int64 `parquet:"line" json:"line"`
	// Reason is a short machine-friendly cause ("invalid_json", ...).
	Reason string `parquet:"reason" json:"reason"`
	// Detail is a human-readable explanation.
	Detail string `parquet:"detail" json:"detail"`
	// Record holds the start of the offending input, truncated.
	Record string `parquet:"record" json:"record"`
}

// SentenceEmbedding is a sentence and its embedding by a surrogate encoder.
type SentenceEmbedding struct {
	// Line is the sentence's 1-based line number in the input file.
	Line      int64     `parquet:"line" json:"line"`
	Sentence  string    `parquet:"sentence" json:"sentence"`
	Embedding []float32 `parquet:"embedding,list" json:"embedding"`
}

// SentenceVector is a corpus sentence's vector under one model (the
// coherence model's BiLSTM vector, the contrastive model's context-table
// sum), computed once by the encode job so that harvest workers load it
// instead of computing it again.
type SentenceVector struct {
	SentenceID string    `parquet:"sentence_id" json:"sentence_id"`
	Vector     []float32 `parquet:"vector,list" json:"vector"`
}
