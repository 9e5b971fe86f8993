package trainjob

import (
	"context"
	"sort"

	"github.com/ctxsim/ctxsim/retrieval/corpus"
	"github.com/ctxsim/ctxsim/schemas"
	"github.com/ctxsim/ctxsim/scoring/examples"
)

// loadStats counts what loadDocs read and rejected.
type loadStats struct {
	Files, Documents, Sentences, Dead int64
	Reasons                           map[string]int64
}

// loadDocs reads the corpus files that patterns name (files, globs or
// directories, local or gs://; JSONL, CSV, Parquet or text; see
// corpus.ExpandInput and corpus.ReadInput), as the index job does, with
// the same document IDs, and splits them into sentences. Bad
// records are counted by reason, as the index job would dead-letter them.
// Documents are returned sorted by ID, so training sees the same order on
// every run; at most maxDocs are kept (0: all), chosen by ID order.
func loadDocs(ctx context.Context, patterns []string, opts corpus.Options, maxDocs int) ([]examples.Doc, loadStats, error) {
	st := loadStats{Reasons: map[string]int64{}}
	dead := func(d schemas.DeadLetter) {
		st.Dead++
		st.Reasons[d.Reason]++
	}
	byID := map[string]examples.Doc{}
	addDoc := func(d schemas.Document) {
		if _, dup := byID[d.DocID]; dup {
			dead(schemas.DeadLetter{Reason: corpus.ReasonDuplicateDocID})
			return
		}
		sents, _, dl := corpus.Split(d, opts)
		for _, x := range dl {
			dead(x)
		}
		if len(sents) == 0 {
			return
		}
		doc := examples.Doc{ID: d.DocID}
		for _, s := range sents {
			doc.Sentences = append(doc.Sentences, s.Text)
		}
		byID[d.DocID] = doc
	}
	for _, pattern := range patterns {
		files, err := corpus.ExpandInput(ctx, pattern, opts)
		if err != nil {
			return nil, st, err
		}
		for _, in := range files {
			st.Files++
			if _, err := corpus.ReadInput(ctx, in, opts, addDoc, dead); err != nil {
				return nil, st, err
			}
		}
	}
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	if maxDocs > 0 && len(ids) > maxDocs {
		ids = ids[:maxDocs]
	}
	docs := make([]examples.Doc, len(ids))
	for i, id := range ids {
		docs[i] = byID[id]
		st.Sentences += int64(len(docs[i].Sentences))
	}
	st.Documents = int64(len(docs))
	return docs, st, nil
}
