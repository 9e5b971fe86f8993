// Package gogemm is a pure-Go (plus Go assembly on amd64) single-precision
// matrix multiply: a Goto-style blocked algorithm that packs panels of A
// and B and sweeps register-blocked micro-kernels over C. It is the Gemm
// backend of package nn when cgo is disabled, and needs no C toolchain.
package gogemm

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// threads is the number of goroutines Gemm may use (see SetThreads).
var threads atomic.Int32

func init() { threads.Store(1) }

// SetThreads sets the number of goroutines a single Gemm call may use; the
// default is one. Values below one are treated as one.
func SetThreads(n int) { threads.Store(int32(max(n, 1))) }

// Threads returns the number of goroutines a Gemm call may use.
func Threads() int { return int(threads.Load()) }

// Kernel is a register-blocked micro-kernel: it adds the product of a
// packed kc×MR panel of A (MR values per step) and a packed kc×NR panel of B
// (NR values per step) to an MR×NR tile of C, or stores it there.
type Kernel struct {
	// Name identifies the kernel, e.g. "avx2-6x16".
	Name string
	// MR and NR are the tile's rows and columns.
	MR, NR int
	fn     func(kc int, a, b, c []float32, ldc int, store bool)
	// dots adds to acc[j], for j < rows, the products x[j*ld+p]*w[p] for
	// p = 0, 1, ..., len(w)-1 in turn, rounding as fn does.
	dots func(x []float32, ld, rows int, w []float32, acc *[dotRows]float32)
	// ex, where not nil, is fn with A read in place (row i of the tile at
	// a[i*lda:], one element per step) when lda > 0, or packed when lda is
	// zero, and with the epilogue given by flags (exStore, exBias, exReLU)
	// applied to the tile before it is stored, bias holding the tile's NR
	// column biases. Its sums are those of fn, bit for bit.
	ex func(kc int, a []float32, lda int, b, c []float32, ldc int, flags int, bias []float32)
	// half says that ex takes exHalf: it then sums columns 0 to NR/2-1
	// alone, with the bits of the full tile, and stores what zero sums
	// give in the others. A tile at the right edge of C with at most NR/2
	// columns takes it, so that it costs half the multiply-adds.
	half bool
}

// Flags of Kernel.ex.
const (
	exStore = 1 << iota // overwrite the tile instead of adding to it
	exBias              // add the column biases
	exReLU              // then replace each value v by max(v, 0)
	exHalf              // the first NR/2 columns alone, the others left zero sums (kernels with half set)
)

// Generic is the portable scalar 4×4 kernel, available everywhere.
var Generic = Kernel{Name: "generic4x4", MR: 4, NR: 4, fn: kernel4x4, dots: dotsGo}

// best is the kernel used by Gemm: the fastest one this CPU supports.
var best = func() Kernel { ks := Kernels(); return ks[len(ks)-1] }()

// Best returns the kernel Gemm uses on this CPU.
func Best() Kernel { return best }

// Cache blocking of gemmGo, in multiples of the kernel's mr and nr.
const (
	blockK       = 256 // depth of a packed panel
	blockMPanels = 24  // mc = blockMPanels * mr
	blockNPanels = 128 // nc = blockNPanels * nr
)

// Gemm computes C = alpha*op(A)*op(B) + beta*C on row-major matrices with
// the fastest available kernel; see GemmWith.
func Gemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	GemmWith(best, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

// scaleC applies C = beta*C; beta == 0 clears C without reading it.
func scaleC(m, n int, beta float32, c []float32, ldc int) {
	if beta == 1 {
		return
	}
	for i := 0; i < m; i++ {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// packBuf holds a packed block of A (a), an edge tile of C (t) and rows
// of a generated A (r, viewed as rows).
type packBuf struct {
	a, t, r []float32
	rows    [][]float32
}

var packPool = sync.Pool{New: func() any { return new(packBuf) }}
var packBPool = sync.Pool{New: func() any { s := []float32(nil); return &s }}

// GemmWith computes C = alpha*op(A)*op(B) + beta*C with kernel kn. op(A)
// is m×k and op(B) k×n; A is stored m×k (lda >= k), or k×m (lda >= m) if
// transA, B is stored k×n (ldb >= n), or n×k (ldb >= k) if transB, and C is
// m×n (ldc >= n). When beta is zero C is not read. The caller must check
// the dimensions: slices too short for their shapes make it panic.
//
// Panels of op(B) (kc×nc) and op(A) (mc×kc) are packed, alpha folded into
// A, and the kernel sweeps MR×NR tiles of C. Blocks of rows of C are shared
// among up to Threads() goroutines for large products.
//
// A plain product (A not transposed, alpha 1, beta 0) on a kernel with an
// ex form reads A in place (see GemmBias): the same bits, without packing A.
func GemmWith(kn Kernel, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if alpha == 0 || k == 0 || m == 0 || n == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	if kn.ex != nil && !transA && alpha == 1 && beta == 0 {
		GemmBias(kn, m, n, k, a, lda, transB, b, ldb, nil, c, ldc, Epilogue{})
		return
	}
	if beta != 0 {
		scaleC(m, n, beta, c, ldc)
	}
	panelB, done := packingB(kn, transB, b, ldb, k, n)
	defer done()
	gemmBlocked(kn, m, n, k, stridedA(kn, transA, a, lda, alpha), beta == 0, c, ldc, panelB, nil)
}

// stridedA packs blocks of alpha*op(A) for A stored in memory.
func stridedA(kn Kernel, transA bool, a []float32, lda int, alpha float32) func(buf *packBuf, ic, pc, mb, kb int) {
	return func(buf *packBuf, ic, pc, mb, kb int) {
		packA(buf.a, transA, a, lda, ic, pc, mb, kb, kn.MR, alpha)
	}
}

// GemmFillA computes C = A*op(B), overwriting C, for an m×k matrix A that
// is not stored: fill(dst, i, p) writes A[i][p : p+len(dst)] into dst
// (len(dst) is at most 256). B and C are as in GemmWith. The result is
// bit-identical to GemmWith(kn, false, transB, m, n, k, 1, A, k, b, ldb,
// 0, c, ldc) on the stored A: the same kernel sums the same products in
// the same order. fill may be called from several goroutines at once (see
// SetThreads), each time for a different row.
//
// pb, when not nil, is op(B) packed by PackB for kn (b, ldb and transB are
// then ignored), with the same bits.
func GemmFillA(kn Kernel, m, n, k int, fill func(dst []float32, i, p int), transB bool, b []float32, ldb int, pb *PackedB, c []float32, ldc int) {
	pb.check("GemmFillA", kn, k, n)
	if k == 0 || m == 0 || n == 0 {
		scaleC(m, n, 0, c, ldc)
		return
	}
	panelB, done := panelsB(kn, transB, b, ldb, pb, k, n)
	defer done()
	// Kernels that read A in place (Kernel.ex) read the filled rows where
	// fill wrote them, with no interleaving into panels.
	gemmBlocked(kn, m, n, k, filledA(kn, fill), true, c, ldc, panelB, &tileOpts{rowsA: kn.ex != nil})
}

// filledA packs blocks of a generated A. For kernels that read A in place
// (Kernel.ex) it has fill write the block's rows straight into buf.a, row
// after row (kb values each, rows past mb up to a whole panel cleared), the
// layout tileOpts.rowsA names. For the others it has fill write up to MR
// rows at a time, then interleaves them into the panel layout of packA.
func filledA(kn Kernel, fill func(dst []float32, i, p int)) func(buf *packBuf, ic, pc, mb, kb int) {
	mr := kn.MR
	if kn.ex != nil {
		return func(buf *packBuf, ic, pc, mb, kb int) {
			for i := 0; i < roundUp(mb, mr); i++ {
				row := buf.a[i*kb : (i+1)*kb : (i+1)*kb]
				if i < mb {
					fill(row, ic+i, pc)
				} else {
					clear(row)
				}
			}
		}
	}
	return func(buf *packBuf, ic, pc, mb, kb int) {
		buf.r = grow(buf.r, mr*kb)
		if len(buf.rows) != mr {
			buf.rows = make([][]float32, mr)
		}
		rows := buf.rows
		for ir := 0; ir < mb; ir += mr {
			nr := min(mr, mb-ir)
			for i := range rows {
				rows[i] = buf.r[i*kb : (i+1)*kb : (i+1)*kb]
				if i < nr {
					fill(rows[i], ic+ir+i, pc)
				} else {
					clear(rows[i])
				}
			}
			interleave(buf.a[ir*kb:ir*kb+mr*kb], rows, kb)
		}
	}
}

// interleave writes dst[p*len(rows)+i] = rows[i][p] for p < kb.
func interleave(dst []float32, rows [][]float32, kb int) {
	if len(rows) == 6 {
		r0, r1, r2, r3, r4, r5 := rows[0][:kb], rows[1][:kb], rows[2][:kb], rows[3][:kb], rows[4][:kb], rows[5][:kb]
		dst = dst[:6*kb]
		for p := range r0 {
			q := dst[6*p : 6*p+6 : 6*p+6]
			q[0], q[1], q[2], q[3], q[4], q[5] = r0[p], r1[p], r2[p], r3[p], r4[p], r5[p]
		}
		return
	}
	mr := len(rows)
	for i, r := range rows {
		for p, v := range r[:kb] {
			dst[p*mr+i] = v
		}
	}
}

// PackedB is a k×n right-hand operand op(B) packed once for kernel Kernel,
// for repeated products with different left-hand operands (for example a
// recurrent weight applied at every time step).
type PackedB struct {
	kn     Kernel
	k, n   int
	blocks [][]float32 // block (jc/nc)*ceil(k/blockK) + pc/blockK
}

// PackB packs op(B), stored k×n (ldb >= n) or, if transB, n×k (ldb >= k),
// for kernel kn.
func PackB(kn Kernel, transB bool, k, n int, b []float32, ldb int) *PackedB {
	p := &PackedB{kn: kn, k: k, n: n}
	nc := blockNPanels * kn.NR
	for jc := 0; jc < n; jc += nc {
		nb := min(nc, n-jc)
		for pc := 0; pc < k; pc += blockK {
			kb := min(blockK, k-pc)
			buf := make([]float32, kb*roundUp(nb, kn.NR))
			packB(buf, transB, b, ldb, pc, jc, kb, nb, kn.NR)
			p.blocks = append(p.blocks, buf)
		}
	}
	return p
}

// K returns the number of rows of op(B).
func (p *PackedB) K() int { return p.k }

// N returns the number of columns of op(B).
func (p *PackedB) N() int { return p.n }

// GemmPacked computes C = alpha*op(A)*op(B) + beta*C where op(B) was packed
// by PackB; op(A) is m×K() and C is m×N(). See GemmWith for the layouts.
func GemmPacked(transA bool, m int, alpha float32, a []float32, lda int, pb *PackedB, beta float32, c []float32, ldc int) {
	if alpha == 0 || pb.k == 0 || m == 0 || pb.n == 0 {
		scaleC(m, pb.n, beta, c, ldc)
		return
	}
	if pb.kn.ex != nil && !transA && alpha == 1 && beta == 0 {
		GemmBias(pb.kn, m, pb.n, pb.k, a, lda, false, nil, 0, pb, c, ldc, Epilogue{})
		return
	}
	if beta != 0 {
		scaleC(m, pb.n, beta, c, ldc)
	}
	gemmBlocked(pb.kn, m, pb.n, pb.k, stridedA(pb.kn, transA, a, lda, alpha), beta == 0, c, ldc, pb.panel, nil)
}

// panel is gemmBlocked's panelB for a packed B: the i-th block.
func (p *PackedB) panel(i, _, _, _, _ int) []float32 { return p.blocks[i] }

// check panics unless p (when not nil) is a k×n op(B) packed for kn;
// name is the caller's.
func (p *PackedB) check(name string, kn Kernel, k, n int) {
	if p != nil && (p.kn.Name != kn.Name || p.k != k || p.n != n) {
		panic(fmt.Sprintf("gogemm: %s: B packed %dx%d for %s, want %dx%d for %s", name, p.k, p.n, p.kn.Name, k, n, kn.Name))
	}
}

// panelsB returns gemmBlocked's panelB for op(B): the blocks of pb when it
// is not nil, else blocks packed from b as they are asked for (packingB).
// done hands back what it borrowed.
func panelsB(kn Kernel, transB bool, b []float32, ldb int, pb *PackedB, k, n int) (panelB func(i, jc, pc, kb, nb int) []float32, done func()) {
	if pb != nil {
		return pb.panel, func() {}
	}
	return packingB(kn, transB, b, ldb, k, n)
}

// packingB returns gemmBlocked's panelB for op(B) stored in memory (k×n,
// or n×k if transB): each call packs the requested block into one pooled
// buffer. done hands the buffer back.
func packingB(kn Kernel, transB bool, b []float32, ldb, k, n int) (panelB func(i, jc, pc, kb, nb int) []float32, done func()) {
	bpp := packBPool.Get().(*[]float32)
	bp := grow(*bpp, min(k, blockK)*min(roundUp(n, kn.NR), blockNPanels*kn.NR))
	*bpp = bp
	return func(_, jc, pc, kb, nb int) []float32 {
		packB(bp, transB, b, ldb, pc, jc, kb, nb, kn.NR)
		return bp
	}, func() { packBPool.Put(bpp) }
}

// Epilogue is what GemmBias does to C after the product.
type Epilogue struct {
	// Bias, when not nil, holds one value per column of C, added to it.
	Bias []float32
	// ReLU replaces every value v of C, after the bias, by max(v, 0).
	ReLU bool
}

// GemmBias computes C = A*op(B), then applies ep: the affine layer
// y = x·Wᵀ + b (with transB and B = W) and its ReLU in one pass. A is m×k,
// stored with lda >= k, and is never transposed or scaled; op(B) and C are
// as in GemmWith, C is overwritten, and pb, when not nil, is op(B) packed
// by PackB for kn (b, ldb and transB are then ignored).
//
// The result is bit-identical to GemmWith(kn, false, transB, m, n, k, 1,
// a, lda, b, ldb, 0, c, ldc) followed by adding Bias[j] to every C[i][j]
// and then taking max(C[i][j], 0): the same sums in the same order. What
// it saves is passes over memory: kernels that can (Kernel.ex) read A in
// place instead of packing it, and apply the epilogue to each tile of C
// while it is still in registers.
func GemmBias(kn Kernel, m, n, k int, a []float32, lda int, transB bool, b []float32, ldb int, pb *PackedB, c []float32, ldc int, ep Epilogue) {
	if ep.Bias != nil && len(ep.Bias) < n {
		panic(fmt.Sprintf("gogemm: GemmBias: %d biases for %d columns", len(ep.Bias), n))
	}
	pb.check("GemmBias", kn, k, n)
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		scaleC(m, n, 0, c, ldc)
		applyEpilogue(c, ldc, m, n, ep.Bias, ep.ReLU)
		return
	}
	panelB, done := panelsB(kn, transB, b, ldb, pb, k, n)
	defer done()
	opt := &tileOpts{bias: ep.Bias, relu: ep.ReLU}
	if kn.ex != nil {
		opt.a, opt.lda = a, lda
	}
	gemmBlocked(kn, m, n, k, stridedA(kn, false, a, lda, 1), true, c, ldc, panelB, opt)
}

// tileOpts are the options of gemmBlocked beyond a plain product.
type tileOpts struct {
	// a and lda, when a is not nil, give A in place (not transposed, not
	// scaled) for the rows of full MR-row panels, read by Kernel.ex; only
	// partial panels are packed.
	a   []float32
	lda int
	// bias and relu are the epilogue (see Epilogue), applied with the last
	// block of the sum over k.
	bias []float32
	relu bool
	// rowsA says that panelA leaves the block of A in buf.a row after row
	// (kb values each, whole panels) for Kernel.ex to read in place,
	// instead of in the packed panel layout.
	rowsA bool
}

// applyEpilogue adds bias[j] (if bias is not nil) to column j of the
// rows×cols block of C at c and then, with relu, takes max(v, 0).
func applyEpilogue(c []float32, ldc, rows, cols int, bias []float32, relu bool) {
	if bias == nil && !relu {
		return
	}
	for i := 0; i < rows; i++ {
		row := c[i*ldc : i*ldc+cols]
		if bias != nil {
			for j, b := range bias[:cols] {
				row[j] += b
			}
		}
		if relu {
			for j, v := range row {
				row[j] = max(v, 0)
			}
		}
	}
}

// gemmBlocked adds alpha*op(A)*op(B) to C, or stores it in C when
// overwrite is set (C is then never read). panelA packs the mb×kb block of
// alpha*op(A) at (ic, pc) into buf.a, as packA does; panelB returns the
// packed kb×nb block of op(B) at (pc, jc), the i-th block in loop order.
//
// opt, when not nil, adds the options of tileOpts (see macroKernel).
func gemmBlocked(kn Kernel, m, n, k int, panelA func(buf *packBuf, ic, pc, mb, kb int), overwrite bool, c []float32, ldc int, panelB func(i, jc, pc, kb, nb int) []float32, opt *tileOpts) {
	mr := kn.MR
	mc, nc := blockMPanels*mr, blockNPanels*kn.NR
	var o tileOpts
	if opt != nil {
		o = *opt
	}
	nthreads := Threads()
	if float64(m)*float64(n)*float64(k) < 1<<18 {
		nthreads = 1
	}
	block := 0
	for jc := 0; jc < n; jc += nc {
		nb := min(nc, n-jc)
		for pc := 0; pc < k; pc += blockK {
			kb := min(blockK, k-pc)
			bp := panelB(block, jc, pc, kb, nb)
			block++
			nBlocks := (m + mc - 1) / mc
			work := func(ic int, buf *packBuf) {
				mb := min(mc, m-ic)
				buf.a = grow(buf.a, roundUp(mb, mr)*kb)
				buf.t = grow(buf.t, mr*kn.NR)
				macroKernel(kn, buf, panelA, o, ic, pc, jc, bp, c[ic*ldc+jc:], ldc, mb, nb, kb, overwrite && pc == 0, pc+kb == k)
			}
			if nthreads <= 1 || nBlocks == 1 {
				buf := packPool.Get().(*packBuf)
				for ic := 0; ic < m; ic += mc {
					work(ic, buf)
				}
				packPool.Put(buf)
				continue
			}
			var next atomic.Int64
			var wg sync.WaitGroup
			for w := 0; w < min(nthreads, nBlocks); w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					buf := packPool.Get().(*packBuf)
					defer packPool.Put(buf)
					for {
						blk := int(next.Add(1)) - 1
						if blk >= nBlocks {
							return
						}
						work(blk*mc, buf)
					}
				}()
			}
			wg.Wait()
		}
	}
}

func roundUp(x, m int) int { return (x + m - 1) / m * m }

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// packA packs the mb×kb block of alpha*op(A) starting at (ic, pc) into
// row panels of height mr, zero-padding the last panel.
func packA(dst []float32, trans bool, a []float32, lda, ic, pc, mb, kb, mr int, alpha float32) {
	for ir := 0; ir < mb; ir += mr {
		rows := min(mr, mb-ir)
		panel := dst[ir*kb : ir*kb+mr*kb]
		if !trans {
			for i := 0; i < rows; i++ {
				src := a[(ic+ir+i)*lda+pc : (ic+ir+i)*lda+pc+kb]
				for p, v := range src {
					panel[p*mr+i] = alpha * v
				}
			}
		} else {
			for p := 0; p < kb; p++ {
				src := a[(pc+p)*lda+ic+ir : (pc+p)*lda+ic+ir+rows]
				d := panel[p*mr : p*mr+rows]
				for i, v := range src {
					d[i] = alpha * v
				}
			}
		}
		if rows < mr {
			for p := 0; p < kb; p++ {
				clear(panel[p*mr+rows : p*mr+mr])
			}
		}
	}
}

// packB packs the kb×nb block of op(B) starting at (pc, jc) into column
// panels of width nr, zero-padding the last panel.
func packB(dst []float32, trans bool, b []float32, ldb, pc, jc, kb, nb, nr int) {
	for jr := 0; jr < nb; jr += nr {
		cols := min(nr, nb-jr)
		panel := dst[jr*kb : jr*kb+nr*kb]
		if !trans {
			for p := 0; p < kb; p++ {
				copy(panel[p*nr:p*nr+cols], b[(pc+p)*ldb+jc+jr:(pc+p)*ldb+jc+jr+cols])
			}
		} else {
			j := 0
			for ; j+8 <= cols; j += 8 {
				transpose8(panel[j:], nr, b[(jc+jr+j)*ldb+pc:], ldb, kb)
			}
			for ; j < cols; j++ {
				src := b[(jc+jr+j)*ldb+pc : (jc+jr+j)*ldb+pc+kb]
				for p, v := range src {
					panel[p*nr+j] = v
				}
			}
		}
		if cols < nr {
			for p := 0; p < kb; p++ {
				clear(panel[p*nr+cols : p*nr+nr])
			}
		}
	}
}

// transpose8 writes dst[p*ld+i] = src[i*lds+p] for i < 8 and p < kb: eight
// rows of src into eight adjacent columns of dst, eight values at a time
// per step of p, which stores far fewer separate cache lines than a column
// at a time.
func transpose8(dst []float32, ld int, src []float32, lds, kb int) {
	r0, r1, r2, r3 := src[:kb], src[lds:lds+kb], src[2*lds:2*lds+kb], src[3*lds:3*lds+kb]
	r4, r5, r6, r7 := src[4*lds:4*lds+kb], src[5*lds:5*lds+kb], src[6*lds:6*lds+kb], src[7*lds:7*lds+kb]
	_ = dst[(kb-1)*ld+7]
	for p := range r0 {
		q := dst[p*ld : p*ld+8 : p*ld+8]
		q[0], q[1], q[2], q[3] = r0[p], r1[p], r2[p], r3[p]
		q[4], q[5], q[6], q[7] = r4[p], r5[p], r6[p], r7[p]
	}
}

// macroKernel multiplies the mb×kb block of A at (ic, pc) by the kb×nb
// block of B at (pc, jc), packed in bp, and adds the result to the mb×nb
// block of C at c (row stride ldc), or stores it there if store is set,
// sweeping the kernel's MR×NR tiles (partial ones through the scratch tile
// buf.t). A is packed into buf.a by panelA, except that the rows of full
// panels are read in place when opt.a is set. last says that this block
// ends the sum over k, so opt's epilogue is due.
func macroKernel(kn Kernel, buf *packBuf, panelA func(buf *packBuf, ic, pc, mb, kb int), opt tileOpts, ic, pc, jc int, bp, c []float32, ldc, mb, nb, kb int, store, last bool) {
	mr, nr := kn.MR, kn.NR
	direct := 0 // rows read in place
	if opt.a != nil {
		direct = mb / mr * mr
	}
	if direct < mb {
		panelA(buf, ic+direct, pc, mb-direct, kb)
	}
	flags := 0
	if store {
		flags = exStore
	}
	var bias []float32
	relu := false
	if last {
		bias, relu = opt.bias, opt.relu
	}
	tmp := buf.t
	for jr := 0; jr < nb; jr += nr {
		cols := min(nr, nb-jr)
		bpanel := bp[jr*kb : jr*kb+nr*kb]
		var tb []float32
		if bias != nil {
			tb = bias[jc+jr : jc+jr+cols]
		}
		for ir := 0; ir < mb; ir += mr {
			rows := min(mr, mb-ir)
			var apanel []float32
			lda := 0
			switch {
			case ir < direct:
				apanel, lda = opt.a[(ic+ir)*opt.lda+pc:], opt.lda
			case opt.rowsA:
				apanel, lda = buf.a[ir*kb:(ir+mr)*kb], kb
			default:
				apanel = buf.a[(ir-direct)*kb : (ir-direct)*kb+mr*kb]
			}
			ct := c[ir*ldc+jr:]
			if rows == mr && cols == nr {
				if kn.ex == nil {
					kn.fn(kb, apanel, bpanel, ct, ldc, store)
					applyEpilogue(ct, ldc, rows, cols, tb, relu)
					continue
				}
				f := flags
				if tb != nil {
					f |= exBias
				}
				if relu {
					f |= exReLU
				}
				kn.ex(kb, apanel, lda, bpanel, ct, ldc, f, tb)
				continue
			}
			if kn.ex != nil {
				f := exStore
				if kn.half && cols <= nr/2 {
					f |= exHalf
				}
				kn.ex(kb, apanel, lda, bpanel, tmp, nr, f, nil)
			} else {
				kn.fn(kb, apanel, bpanel, tmp, nr, true)
			}
			for i := 0; i < rows; i++ {
				dst := ct[i*ldc : i*ldc+cols]
				if store {
					copy(dst, tmp[i*nr:i*nr+cols])
					continue
				}
				for j := range dst {
					dst[j] += tmp[i*nr+j]
				}
			}
			applyEpilogue(ct, ldc, rows, cols, tb, relu)
		}
	}
}

// kernel4x4 is the portable scalar micro-kernel for mr = nr = 4.
func kernel4x4(kc int, a, b, c []float32, ldc int, store bool) {
	var c00, c01, c02, c03 float32
	var c10, c11, c12, c13 float32
	var c20, c21, c22, c23 float32
	var c30, c31, c32, c33 float32
	a = a[:4*kc]
	b = b[:4*kc]
	for p := 0; p+4 <= len(a); p += 4 {
		aa := a[p : p+4 : p+4]
		bb := b[p : p+4 : p+4]
		a0, a1, a2, a3 := aa[0], aa[1], aa[2], aa[3]
		b0, b1, b2, b3 := bb[0], bb[1], bb[2], bb[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
	}
	if store {
		copy(c[0:4], []float32{c00, c01, c02, c03})
		copy(c[ldc:ldc+4], []float32{c10, c11, c12, c13})
		copy(c[2*ldc:2*ldc+4], []float32{c20, c21, c22, c23})
		copy(c[3*ldc:3*ldc+4], []float32{c30, c31, c32, c33})
		return
	}
	r := c[0:4:4]
	r[0] += c00
	r[1] += c01
	r[2] += c02
	r[3] += c03
	r = c[ldc : ldc+4 : ldc+4]
	r[0] += c10
	r[1] += c11
	r[2] += c12
	r[3] += c13
	r = c[2*ldc : 2*ldc+4 : 2*ldc+4]
	r[0] += c20
	r[1] += c21
	r[2] += c22
	r[3] += c23
	r = c[3*ldc : 3*ldc+4 : 3*ldc+4]
	r[0] += c30
	r[1] += c31
	r[2] += c32
	r[3] += c33
}

// dotRows is the number of rows RowDots works on at once.
const dotRows = 32

// RowDots sets c[i] = Σ_p A[i][p]·w[p] for the m×len(w) matrix A whose
// row i is the concatenation of the rows i of parts (parts[j] is m×w_j,
// row-major, and the w_j add up to len(w)), without building A. The result
// is bit-identical to GemmWith(kn, false, false, m, 1, len(w), 1, A,
// len(w), w, 1, 0, c, 1): each c[i] is the same sum of the same products in
// the same order, blocked over p as GemmWith blocks it, but none of the
// lanes of the kernel's tiles are spent on absent columns of C.
func RowDots(kn Kernel, m int, parts [][]float32, w, c []float32) {
	if m == 0 {
		return
	}
	k := len(w)
	widths := make([]int, len(parts))
	sum := 0
	for j, p := range parts {
		widths[j] = len(p) / m
		if len(p) != m*widths[j] {
			panic(fmt.Sprintf("gogemm: RowDots: part %d has %d values for %d rows", j, len(p), m))
		}
		sum += widths[j]
	}
	if sum != k || len(c) < m {
		panic(fmt.Sprintf("gogemm: RowDots: parts %d wide for %d weights, %d outputs for %d rows", sum, k, len(c), m))
	}
	if k == 0 {
		clear(c[:m])
		return
	}
	var acc [dotRows]float32
	for i0 := 0; i0 < m; i0 += dotRows {
		rows := min(dotRows, m-i0)
		for pc := 0; pc < k; pc += blockK {
			kb := min(blockK, k-pc)
			clear(acc[:])
			off := 0
			for j, p := range parts {
				wj := widths[j]
				if lo, hi := max(pc, off), min(pc+kb, off+wj); lo < hi {
					kn.dots(p[i0*wj+lo-off:], wj, rows, w[lo:hi], &acc)
				}
				off += wj
			}
			out := c[i0 : i0+rows]
			if pc == 0 {
				copy(out, acc[:rows])
				continue
			}
			for i := range out {
				out[i] += acc[i]
			}
		}
	}
}

// dotsGo is the dots function of the scalar kernel, with its expression.
func dotsGo(x []float32, ld, rows int, w []float32, acc *[dotRows]float32) {
	n := len(w)
	for j := 0; j < rows; j++ {
		a := acc[j]
		for p, v := range x[j*ld : j*ld+n] {
			a += v * w[p]
		}
		acc[j] = a
	}
}
