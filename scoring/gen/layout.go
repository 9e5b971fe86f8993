package gen

import (
	"encoding/binary"
	"fmt"

	"github.com/ctxsim/ctxsim/scoring/examples"
	"github.com/ctxsim/ctxsim/scoring/nn"
	"github.com/ctxsim/ctxsim/scoring/tokenizer"
)

// Special token ids, as ints.
const (
	padID   = int(tokenizer.PadID)
	bosID   = int(tokenizer.BOSID)
	eosID   = int(tokenizer.EOSID)
	sepID   = int(tokenizer.SepID)
	maskID  = int(tokenizer.MaskID)
	toSID   = int(tokenizer.ToSentenceID)
	toLID   = int(tokenizer.ToLeftID)
	toRID   = int(tokenizer.ToRightID)
	slotSeg = 0
)

// Tokenizer turns text into token ids.
type Tokenizer interface {
	Encode(text string) []int32
}

// Request is one likelihood to compute, on token ids so that callers
// scoring many (sentence, context) pairs tokenize each sentence once.
// Left and Right hold the context sentences in document order.
type Request struct {
	Left  [][]int32
	S     []int32
	Right [][]int32
	Dir   examples.Direction
}

// NewRequest tokenizes a context, a sentence and a direction.
func NewRequest(tok Tokenizer, ctx examples.Context, s string, dir examples.Direction) Request {
	enc := func(ss []string) [][]int32 {
		out := make([][]int32, len(ss))
		for i, x := range ss {
			out[i] = tok.Encode(x)
		}
		return out
	}
	return Request{Left: enc(ctx.Left), S: tok.Encode(s), Right: enc(ctx.Right), Dir: dir}
}

// seq is a request laid out for the model: source ids and segments, and
// the target ending in <eos>.
type seq struct {
	src, seg, tgt []int
}

// segID returns the segment of the k-th sentence from the slot (k >= 1) on
// the left (right == false) or the right.
func (m *Model) segID(k int, right bool) int {
	k = min(k, (m.Cfg.MaxSegments-1)/2)
	if right {
		return 2 * k
	}
	return 2*k - 1
}

// flatten concatenates sentences, returning ids and segment ids; left
// sentences are numbered from the end (the slot side).
func (m *Model) flatten(sents [][]int32, right bool) (ids, seg []int) {
	n := 0
	for _, s := range sents {
		n += len(s)
	}
	ids, seg = make([]int, 0, n), make([]int, 0, n)
	for i, s := range sents {
		k := i + 1
		if !right {
			k = len(sents) - i
		}
		g := m.segID(k, right)
		for _, t := range s {
			ids = append(ids, int(t))
			seg = append(seg, g)
		}
	}
	return ids, seg
}

// share splits a budget between segments of lengths a and b, each getting
// at least half of it when both are long.
func share(a, b, budget int) (int, int) {
	if a+b <= budget {
		return a, b
	}
	na := min(a, max(budget/2, budget-b))
	return na, min(b, budget-na)
}

// layout builds the source and target of r (see the package comment).
func (m *Model) layout(r *Request) seq {
	budget := m.Cfg.MaxSrc - 4
	maxT := m.Cfg.MaxTgt - 1
	sIDs := make([]int, len(r.S))
	sSeg := make([]int, len(r.S))
	for i, t := range r.S {
		sIDs[i] = int(t)
	}
	var q seq
	add := func(ids, seg []int) {
		q.src = append(q.src, ids...)
		q.seg = append(q.seg, seg...)
	}
	tok := func(id int) { add([]int{id}, []int{slotSeg}) }
	switch r.Dir {
	case examples.ToSentence:
		l, ls := m.flatten(r.Left, false)
		rt, rs := m.flatten(r.Right, true)
		nl, nr := share(len(l), len(rt), budget)
		q.src = make([]int, 0, 4+nl+nr)
		q.seg = make([]int, 0, 4+nl+nr)
		tok(toSID)
		add(l[len(l)-nl:], ls[len(l)-nl:])
		tok(sepID)
		tok(maskID)
		tok(sepID)
		add(rt[:nr], rs[:nr])
		q.tgt = append(sIDs[:min(len(sIDs), maxT):min(len(sIDs), maxT)], eosID)
	case examples.ToLeft:
		rt, rs := m.flatten(r.Right, true)
		ns, nr := share(len(sIDs), len(rt), budget)
		q.src = make([]int, 0, 4+ns+nr)
		q.seg = make([]int, 0, 4+ns+nr)
		tok(toLID)
		tok(maskID)
		tok(sepID)
		add(sIDs[:ns], sSeg[:ns])
		tok(sepID)
		add(rt[:nr], rs[:nr])
		l, _ := m.flatten(r.Left, false)
		l = l[max(0, len(l)-maxT):]
		q.tgt = append(l[:len(l):len(l)], eosID)
	case examples.ToRight:
		l, ls := m.flatten(r.Left, false)
		nl, ns := share(len(l), len(sIDs), budget)
		q.src = make([]int, 0, 4+nl+ns)
		q.seg = make([]int, 0, 4+nl+ns)
		tok(toRID)
		add(l[len(l)-nl:], ls[len(l)-nl:])
		tok(sepID)
		add(sIDs[len(sIDs)-ns:], sSeg[len(sIDs)-ns:])
		tok(sepID)
		tok(maskID)
		rt, _ := m.flatten(r.Right, true)
		rt = rt[:min(len(rt), maxT)]
		q.tgt = append(rt[:len(rt):len(rt)], eosID)
	default:
		panic(fmt.Sprintf("gen: unknown direction %d", r.Dir))
	}
	for _, t := range q.src {
		if t < 0 || t >= m.Cfg.Vocab {
			panic(fmt.Sprintf("gen: token id %d outside the vocabulary [0, %d)", t, m.Cfg.Vocab))
		}
	}
	for _, t := range q.tgt {
		if t <= padID || t >= m.Cfg.Vocab {
			panic(fmt.Sprintf("gen: target token id %d outside [1, %d)", t, m.Cfg.Vocab))
		}
	}
	return q
}

// batch is a padded set of laid-out requests.
type batch struct {
	n, ts, tt int
	// nu distinct sources: src, srcPos, srcSeg and srcPad are (nu, ts);
	// request i reads source uniq[i]. Without de-duplication nu == n and
	// uniq[i] == i.
	nu                  int
	src, srcPos, srcSeg []int
	srcPad              []bool
	uniq                []int
	// pad is the (n, ts) source padding mask of every request.
	pad         []bool
	dec, decPos []int // n*tt
	// rows is the flat index b*tt+t of every target token, tgt its id and
	// owner its request within the batch.
	rows, tgt, owner []int
}

// newBatch pads seqs into one batch. With dedup, identical sources are
// encoded once (for scoring only: backward assumes nu == n).
func newBatch(seqs []seq, dedup bool) *batch {
	b := &batch{n: len(seqs), uniq: make([]int, len(seqs))}
	srcLens := make([]int, len(seqs))
	nt := 0
	for i, q := range seqs {
		srcLens[i] = len(q.src)
		b.ts = max(b.ts, len(q.src))
		b.tt = max(b.tt, len(q.tgt))
		nt += len(q.tgt)
	}
	var first []int // first request of each distinct source
	var seen map[string]int
	var key []byte
	if dedup {
		seen = make(map[string]int, len(seqs))
	}
	for i, q := range seqs {
		if dedup {
			key = key[:0]
			for k, t := range q.src {
				key = binary.AppendUvarint(key, uint64(t))
				key = binary.AppendUvarint(key, uint64(q.seg[k]))
			}
			if u, ok := seen[string(key)]; ok {
				b.uniq[i] = u
				continue
			}
			seen[string(key)] = len(first)
		}
		b.uniq[i] = len(first)
		first = append(first, i)
	}
	b.nu = len(first)
	b.src = make([]int, b.nu*b.ts)
	b.srcPos = make([]int, b.nu*b.ts)
	b.srcSeg = make([]int, b.nu*b.ts)
	uLens := make([]int, b.nu)
	for u, i := range first {
		q := seqs[i]
		uLens[u] = len(q.src)
		o := u * b.ts
		copy(b.src[o:], q.src)
		copy(b.srcSeg[o:], q.seg)
		for t := range len(q.src) {
			b.srcPos[o+t] = t
		}
	}
	b.srcPad = nn.PadMask(uLens, b.ts)
	b.pad = nn.PadMask(srcLens, b.ts)
	b.dec = make([]int, b.n*b.tt)
	b.decPos = make([]int, b.n*b.tt)
	b.rows = make([]int, 0, nt)
	b.tgt = make([]int, 0, nt)
	b.owner = make([]int, 0, nt)
	for i, q := range seqs {
		o := i * b.tt
		for t, id := range q.tgt {
			if t == 0 {
				b.dec[o] = bosID
			} else {
				b.dec[o+t] = q.tgt[t-1]
			}
			b.rows = append(b.rows, o+t)
			b.tgt = append(b.tgt, id)
			b.owner = append(b.owner, i)
		}
		for t := range b.tt {
			b.decPos[o+t] = t
		}
	}
	return b
}
