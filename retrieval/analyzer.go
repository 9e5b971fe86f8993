// Package retrieval builds, opens and searches ctxsim's chunk index: a set of
// bleve shards over a bag-of-bigrams field, scored by TF-IDF with IDF counted
// over all shards together, so that a query's scores do not depend on how the
// corpus was sharded.
//
// It knows nothing about Beam or the models.
package retrieval

import (
	"fmt"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/shingle"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
)

// AnalyzerID names the text analysis of the index. An index records the ID it
// was built with, and Open refuses an index whose ID differs: queries would
// be analysed differently from the documents. Change the ID whenever the
// analysis changes.
const AnalyzerID = "ctxsim-bigram/1"

const (
	bigramAnalyzer  = "ctxsim_bigram"
	unigramAnalyzer = "ctxsim_unigram"
	bigramFilter    = "ctxsim_shingle2"

	// BigramField is the indexed field holding word bigrams.
	BigramField = "bi"
	// UnigramField is the indexed field holding unigrams without stop
	// words; present only when the index was built with Unigrams.
	UnigramField = "uni"
)

// newMapping returns the index mapping: one analysed, unstored field of
// lowercased word bigrams, and optionally one of stop-word-free unigrams.
// Scoring is bleve's default TF-IDF.
func newMapping(unigrams bool) (*mapping.IndexMappingImpl, error) {
	im := bleve.NewIndexMapping()
	err := im.AddCustomTokenFilter(bigramFilter, map[string]interface{}{
		"type":            shingle.Name,
		"min":             2.0,
		"max":             2.0,
		"output_original": false,
		"separator":       " ",
	})
	if err != nil {
		return nil, err
	}
	err = im.AddCustomAnalyzer(bigramAnalyzer, map[string]interface{}{
		"type":          custom.Name,
		"tokenizer":     unicode.Name,
		"token_filters": []string{lowercase.Name, bigramFilter},
	})
	if err != nil {
		return nil, err
	}
	err = im.AddCustomAnalyzer(unigramAnalyzer, map[string]interface{}{
		"type":          custom.Name,
		"tokenizer":     unicode.Name,
		"token_filters": []string{lowercase.Name, en.StopName},
	})
	if err != nil {
		return nil, err
	}
	im.DefaultAnalyzer = bigramAnalyzer
	im.StoreDynamic = false
	im.IndexDynamic = false
	im.DocValuesDynamic = false

	dm := bleve.NewDocumentStaticMapping()
	bi := bleve.NewTextFieldMapping()
	bi.Analyzer = bigramAnalyzer
	bi.Store = false
	bi.IncludeInAll = false
	bi.IncludeTermVectors = false
	bi.DocValues = false
	dm.AddFieldMappingsAt(BigramField, bi)
	if unigrams {
		uni := bleve.NewTextFieldMapping()
		uni.Analyzer = unigramAnalyzer
		uni.Store = false
		uni.IncludeInAll = false
		uni.IncludeTermVectors = false
		uni.DocValues = false
		dm.AddFieldMappingsAt(UnigramField, uni)
	}
	im.DefaultMapping = dm
	if err := im.Validate(); err != nil {
		return nil, fmt.Errorf("index mapping: %w", err)
	}
	return im, nil
}

// Analyzer turns text into the terms the index holds.
type Analyzer struct {
	bigram  analysis.Analyzer
	unigram analysis.Analyzer
}

// NewAnalyzer returns the analyzer of AnalyzerID.
func NewAnalyzer() (*Analyzer, error) {
	m, err := newMapping(true)
	if err != nil {
		return nil, err
	}
	a := &Analyzer{
		bigram:  m.AnalyzerNamed(bigramAnalyzer),
		unigram: m.AnalyzerNamed(unigramAnalyzer),
	}
	if a.bigram == nil || a.unigram == nil {
		return nil, fmt.Errorf("analyzers not registered")
	}
	return a, nil
}

// Bigrams returns the distinct lowercased word bigrams of text, in order of
// first occurrence.
func (a *Analyzer) Bigrams(text string) []string {
	return distinctTerms(a.bigram.Analyze([]byte(text)))
}

// BigramTokens returns every lowercased word bigram of text in order,
// repeats included: the terms the bigram field holds for a chunk of this
// text, each as often as its within-chunk frequency.
func (a *Analyzer) BigramTokens(text string) []string {
	ts := a.bigram.Analyze([]byte(text))
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t.Term)
	}
	return out
}

// Unigrams returns the distinct lowercased words of text that are not
// English stop words, in order of first occurrence.
func (a *Analyzer) Unigrams(text string) []string {
	return distinctTerms(a.unigram.Analyze([]byte(text)))
}

func distinctTerms(ts analysis.TokenStream) []string {
	seen := make(map[string]bool, len(ts))
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		s := string(t.Term)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
