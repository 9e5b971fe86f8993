// Package corpus turns raw corpus files into ctxsim records: it parses JSONL
// and plain-text documents, normalises text (NFC, whitespace), splits
// paragraphs into sentences with a rule-based splitter, cuts documents into
// chunks of consecutive sentences, and gives every sentence and chunk a
// stable ID. Bad input becomes a schemas.DeadLetter with a reason; nothing is
// dropped silently.
//
// The package knows nothing about Beam: transforms/ adapts it.
package corpus
