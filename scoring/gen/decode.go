package gen

import (
	"slices"

	"github.com/ctxsim/ctxsim/scoring/nn"
)

// decodeInGroups lets decode split a batch by target length; tests turn
// it off to compare with one pass.
var decodeInGroups = true

// groupRows is what one more decoder group costs, in padded target rows:
// the fixed work of a pass through the decoder layers.
const groupRows = 16

// kvShare is the work of the cross-attention's key and value projections
// for one source token, as a share of the decoder's work per target row:
// 2·d² against the 14·d² of a row's projections and feed-forward (ff = 4d).
const kvShare = 1.0 / 7

// decode returns the final decoder states of b's target tokens, one row
// per entry of b.rows, for inference. The requests are decoded in groups
// of similar target length, each padded to its own longest target rather
// than to the batch's: a batch's targets vary in length far more than its
// sources (which it is sorted by), and padded target rows cost as much as
// real ones in every decoder layer. Every layer treats rows independently
// and a target step attends to its own and earlier steps only, so the
// states are those of one pass over the whole batch, bit for bit, as long
// as a product's rows do not depend on its height (nn.RowExact); with a
// backend where they may, decode keeps to one pass so that scores do not
// depend on how a batch happens to split.
func (m *Model) decode(b *batch, mem memory) *nn.Tensor {
	d := m.Cfg.Dim
	lens := make([]int, b.n)
	for _, o := range b.owner {
		lens[o]++
	}
	var groups [][]int
	if decodeInGroups && nn.RowExact() {
		groups = targetGroups(lens, mem.blocks(b.n), b.ts)
	}
	if groups == nil {
		return m.decodeGroup(b, mem, lens, nil)
	}
	h := nn.NewTensor(len(b.rows), d)
	start := make([]int, b.n) // the first row in h of each request
	for i, off := 0, 0; i < b.n; i++ {
		start[i], off = off, off+lens[i]
	}
	for _, g := range groups {
		gm := mem.gather(g, b.ts, d)
		hg := m.decodeGroup(b, gm, lens, g)
		r := 0
		for _, i := range g {
			copy(h.Data[start[i]*d:(start[i]+lens[i])*d], hg.Data[r*d:(r+lens[i])*d])
			r += lens[i]
		}
		hg.Release()
		gm.t.Release()
	}
	return h
}

// decodeGroup runs the decoder on requests g of b (all of them when g is
// nil), padded to the longest target among them, attending to mem (whose
// entry p is that of g[p]), and returns the final states of their target
// tokens in the order of g.
func (m *Model) decodeGroup(b *batch, mem memory, lens, g []int) *nn.Tensor {
	d := m.Cfg.Dim
	ids, pos, tt := b.dec, b.decPos, b.tt
	gl := lens // target lengths in the order decoded
	if g != nil {
		gl, tt = make([]int, len(g)), 0
		for p, i := range g {
			gl[p] = lens[i]
			tt = max(tt, lens[i])
		}
		ids, pos = make([]int, len(g)*tt), make([]int, len(g)*tt)
		// A request's real steps come first in its row of b, so the first
		// tt entries of each row hold them all.
		for p, i := range g {
			copy(ids[p*tt:(p+1)*tt], b.dec[i*b.tt:])
			copy(pos[p*tt:(p+1)*tt], b.decPos[i*b.tt:])
		}
	}
	y := m.embed(ids, pos, nil, m.TgtPos, len(gl), tt)
	for _, l := range m.Dec {
		ny, _ := l.forward(y, mem, false)
		y.Release()
		y = ny
	}
	hf := m.DecNorm.Apply(y)
	y.Release()
	rows := 0
	for _, k := range gl {
		rows += k
	}
	h := nn.NewTensor(rows, d)
	r := 0
	for p, k := range gl {
		copy(h.Data[r*d:(r+k)*d], hf.Data[p*tt*d:(p*tt+k)*d])
		r += k
	}
	hf.Release()
	return h
}

// blocks returns, for each of n requests, the memory block it reads.
func (mm memory) blocks(n int) []int {
	if mm.src != nil {
		return mm.src
	}
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// gather returns the memory of requests g: the distinct blocks they read,
// copied in order of first use, with entry p of src that of g[p].
func (mm memory) gather(g []int, ts, d int) memory {
	idx := map[int]int{}
	var order []int
	src := make([]int, len(g))
	for p, i := range g {
		u := i
		if mm.src != nil {
			u = mm.src[i]
		}
		k, ok := idx[u]
		if !ok {
			k = len(order)
			idx[u] = k
			order = append(order, u)
		}
		src[p] = k
	}
	t := nn.NewTensor(len(order), ts, d)
	pad := make([]bool, len(order)*ts)
	for k, u := range order {
		copy(t.Data[k*ts*d:(k+1)*ts*d], mm.t.Data[u*ts*d:])
		copy(pad[k*ts:(k+1)*ts], mm.pad[u*ts:])
	}
	return memory{t: t, pad: pad, src: src}
}

// targetGroups splits requests with target lengths lens, reading memory
// blocks (of ts tokens) blocks[i], into groups of similar target length
// that minimise the decoder's work: the padded target rows of every group,
// the key and value projections of the blocks each group reads, and
// groupRows per group. Each group lists its requests by target length.
// It returns nil when one group is best.
func targetGroups(lens, blocks []int, ts int) [][]int {
	n := len(lens)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return lens[a] - lens[b] })
	// best[j] is the least work for the first j requests in order, from
	// groups order[cut[j]:j] and before.
	best := make([]float64, n+1)
	cut := make([]int, n+1)
	seen := map[int]bool{}
	for j := 1; j <= n; j++ {
		best[j] = -1
		clear(seen)
		distinct := 0
		// The group order[i:j], grown leftwards; order[j-1] is its longest.
		for i := j - 1; i >= 0; i-- {
			if u := blocks[order[i]]; !seen[u] {
				seen[u] = true
				distinct++
			}
			w := best[i] + float64((j-i)*lens[order[j-1]]+groupRows) + kvShare*float64(distinct*ts)
			if best[j] < 0 || w < best[j] {
				best[j], cut[j] = w, i
			}
		}
	}
	var groups [][]int
	for j := n; j > 0; j = cut[j] {
		groups = append(groups, order[cut[j]:j])
	}
	if len(groups) == 1 {
		return nil
	}
	slices.Reverse(groups)
	return groups
}
