//go:build amd64

#include "textflag.h"

// func dotAVX2(a, b *float32, n int) float32
// n is a positive multiple of 32. Four eight-lane accumulators, multiplies
// and adds rounded separately (VMULPS, VADDPS), then the lane sum of dot32.
TEXT ·dotAVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

loop:
	VMOVUPS 0(SI), Y4
	VMULPS  0(DI), Y4, Y4
	VADDPS  Y4, Y0, Y0
	VMOVUPS 32(SI), Y5
	VMULPS  32(DI), Y5, Y5
	VADDPS  Y5, Y1, Y1
	VMOVUPS 64(SI), Y6
	VMULPS  64(DI), Y6, Y6
	VADDPS  Y6, Y2, Y2
	VMOVUPS 96(SI), Y7
	VMULPS  96(DI), Y7, Y7
	VADDPS  Y7, Y3, Y3
	ADDQ    $128, SI
	ADDQ    $128, DI
	SUBQ    $32, CX
	JNZ     loop

	// t = (acc0 + acc1) + (acc2 + acc3)
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	// u[j] = t[j] + t[j+4]
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	// (u0 + u2) + (u1 + u3)
	VMOVHLPS     X0, X0, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET

// func addAVX2(dst, x *float32, n int)
// dst[i] += x[i]; n is a positive multiple of 32.
TEXT ·addAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX

addloop:
	VMOVUPS 0(DI), Y0
	VADDPS  0(SI), Y0, Y0
	VMOVUPS Y0, 0(DI)
	VMOVUPS 32(DI), Y1
	VADDPS  32(SI), Y1, Y1
	VMOVUPS Y1, 32(DI)
	VMOVUPS 64(DI), Y2
	VADDPS  64(SI), Y2, Y2
	VMOVUPS Y2, 64(DI)
	VMOVUPS 96(DI), Y3
	VADDPS  96(SI), Y3, Y3
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, DI
	ADDQ    $128, SI
	SUBQ    $32, CX
	JNZ     addloop
	VZEROUPPER
	RET

// func prefetchLines(p *float32, n int)
// PREFETCHT0 of every 64-byte line of n float32 values from p (n > 0).
TEXT ·prefetchLines(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	SHLQ $2, CX
	ADDQ SI, CX

pf:
	PREFETCHT0 (SI)
	ADDQ       $64, SI
	CMPQ       SI, CX
	JB         pf
	RET
