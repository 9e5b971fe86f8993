package vecmath

// Dot returns Σ a[i]·b[i] over the first len(a) values (b must hold at
// least that many), in one fixed order whatever the CPU: the leading
// multiple of 32 values is summed in 32 lanes (lane l takes every value
// whose index is l modulo 32), the lanes are added pairwise down to one,
// and the remaining values follow one by one. Every product and sum is
// rounded to float32 (no fused multiply-add), so the assembly (AVX2, eight
// lanes at a time) and the portable loop give the same bits.
func Dot(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	v := n &^ 31
	var s float32
	if v > 0 {
		if !dotVec(a[:v], b[:v], &s) {
			s = dot32(a[:v], b[:v])
		}
	}
	for i := v; i < n; i++ {
		s += float32(a[i] * b[i])
	}
	return s
}

// dot32 is Dot's lane sum over a multiple of 32 values, in plain Go. The
// assembly keeps four eight-lane accumulators, acc[8k+l] for k < 4 and
// l < 8; here each group k is summed in its own pass, in eight locals the
// compiler keeps in registers, which gives every lane the same sum.
func dot32(a, b []float32) float32 {
	var acc [32]float32
	for k := 0; k < 32; k += 8 {
		var l0, l1, l2, l3, l4, l5, l6, l7 float32
		for i := k; i+8 <= len(a); i += 32 {
			x, y := a[i:i+8:i+8], b[i:i+8:i+8]
			l0 += float32(x[0] * y[0])
			l1 += float32(x[1] * y[1])
			l2 += float32(x[2] * y[2])
			l3 += float32(x[3] * y[3])
			l4 += float32(x[4] * y[4])
			l5 += float32(x[5] * y[5])
			l6 += float32(x[6] * y[6])
			l7 += float32(x[7] * y[7])
		}
		acc[k], acc[k+1], acc[k+2], acc[k+3] = l0, l1, l2, l3
		acc[k+4], acc[k+5], acc[k+6], acc[k+7] = l4, l5, l6, l7
	}
	var t [8]float32
	for l := range 8 {
		t[l] = (acc[l] + acc[8+l]) + (acc[16+l] + acc[24+l])
	}
	var u [4]float32
	for j := range 4 {
		u[j] = t[j] + t[j+4]
	}
	return (u[0] + u[2]) + (u[1] + u[3])
}

// AddTo adds x to dst element by element (x must hold at least len(dst)
// values). Each element gets one float32 addition, so the AVX2 kernel
// (the leading multiple of 32 values) and the plain loop give the same
// bits.
func AddTo(dst, x []float32) {
	x = x[:len(dst)]
	v := len(dst) &^ 31
	if v == 0 || !addVec(dst[:v], x[:v]) {
		v = 0
	}
	for i := v; i < len(dst); i++ {
		dst[i] += x[i]
	}
}
