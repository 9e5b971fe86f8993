//go:build amd64

#include "textflag.h"

// Micro-kernels for GemmWith: C[i*ldc+j] (+)= sum_p a[p*MR+i] * b[p*NR+j]
// for an MR x NR tile, with A and B packed by packA and packB; the result
// is added to C, or overwrites it when store is non-zero. Each step of the
// loop loads the NR values of the B panel into two vector registers, then
// broadcasts each of the MR values of the A panel and accumulates with FMA
// into 2*MR accumulator registers (12 of the 16 YMM or 32 ZMM registers).

// func kernel6x16AVX2Ex(kc int, a *float32, lda int, b, c *float32, ldc int, flags int, bias *float32)
//
// The AVX2 micro-kernel: a 6x16 tile as described at the top, in the ex
// form of kernel6x32AVX512Ex below (the plain kernel is lda = 0 with flags
// 0 or 1): A packed (lda = 0) or read in place (row i at a + i*lda), and the
// epilogue of flags (bit 0 overwrite, bit 1 add bias[j], bit 2 ReLU)
// applied before the tile is stored.
TEXT ·kernel6x16AVX2Ex(SB), NOSPLIT, $0-64
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ lda+16(FP), R8
	MOVQ b+24(FP), BX
	MOVQ c+32(FP), DI
	MOVQ ldc+40(FP), DX
	MOVQ flags+48(FP), SI
	MOVQ bias+56(FP), R10
	SHLQ $2, DX
	SHLQ $2, R8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	TESTQ CX, CX
	JE kernel6x16AVX2Ex_epilogue
	TESTQ R8, R8
	JNE kernel6x16AVX2Ex_direct

kernel6x16AVX2Ex_packed:
	VMOVUPS 0(BX), Y12
	VMOVUPS 32(BX), Y13
	VBROADCASTSS 0(AX), Y14
	VFMADD231PS Y12, Y14, Y0
	VFMADD231PS Y13, Y14, Y1
	VBROADCASTSS 4(AX), Y15
	VFMADD231PS Y12, Y15, Y2
	VFMADD231PS Y13, Y15, Y3
	VBROADCASTSS 8(AX), Y14
	VFMADD231PS Y12, Y14, Y4
	VFMADD231PS Y13, Y14, Y5
	VBROADCASTSS 12(AX), Y15
	VFMADD231PS Y12, Y15, Y6
	VFMADD231PS Y13, Y15, Y7
	VBROADCASTSS 16(AX), Y14
	VFMADD231PS Y12, Y14, Y8
	VFMADD231PS Y13, Y14, Y9
	VBROADCASTSS 20(AX), Y15
	VFMADD231PS Y12, Y15, Y10
	VFMADD231PS Y13, Y15, Y11
	ADDQ $24, AX
	ADDQ $64, BX
	DECQ CX
	JNZ kernel6x16AVX2Ex_packed
	JMP kernel6x16AVX2Ex_epilogue

kernel6x16AVX2Ex_direct:
	LEAQ (AX)(R8*2), R9
	ADDQ R8, R9

kernel6x16AVX2Ex_dloop:
	VMOVUPS 0(BX), Y12
	VMOVUPS 32(BX), Y13
	VBROADCASTSS (AX), Y14
	VFMADD231PS Y12, Y14, Y0
	VFMADD231PS Y13, Y14, Y1
	VBROADCASTSS (AX)(R8*1), Y15
	VFMADD231PS Y12, Y15, Y2
	VFMADD231PS Y13, Y15, Y3
	VBROADCASTSS (AX)(R8*2), Y14
	VFMADD231PS Y12, Y14, Y4
	VFMADD231PS Y13, Y14, Y5
	VBROADCASTSS (R9), Y15
	VFMADD231PS Y12, Y15, Y6
	VFMADD231PS Y13, Y15, Y7
	VBROADCASTSS (R9)(R8*1), Y14
	VFMADD231PS Y12, Y14, Y8
	VFMADD231PS Y13, Y14, Y9
	VBROADCASTSS (R9)(R8*2), Y15
	VFMADD231PS Y12, Y15, Y10
	VFMADD231PS Y13, Y15, Y11
	ADDQ $4, AX
	ADDQ $4, R9
	ADDQ $64, BX
	DECQ CX
	JNZ kernel6x16AVX2Ex_dloop

kernel6x16AVX2Ex_epilogue:
	TESTQ $1, SI
	JNE kernel6x16AVX2Ex_bias
	MOVQ DI, R11
	VADDPS 0(R11), Y0, Y0
	VADDPS 32(R11), Y1, Y1
	ADDQ DX, R11
	VADDPS 0(R11), Y2, Y2
	VADDPS 32(R11), Y3, Y3
	ADDQ DX, R11
	VADDPS 0(R11), Y4, Y4
	VADDPS 32(R11), Y5, Y5
	ADDQ DX, R11
	VADDPS 0(R11), Y6, Y6
	VADDPS 32(R11), Y7, Y7
	ADDQ DX, R11
	VADDPS 0(R11), Y8, Y8
	VADDPS 32(R11), Y9, Y9
	ADDQ DX, R11
	VADDPS 0(R11), Y10, Y10
	VADDPS 32(R11), Y11, Y11

kernel6x16AVX2Ex_bias:
	TESTQ $2, SI
	JE kernel6x16AVX2Ex_relu
	VMOVUPS 0(R10), Y12
	VMOVUPS 32(R10), Y13
	VADDPS Y12, Y0, Y0
	VADDPS Y13, Y1, Y1
	VADDPS Y12, Y2, Y2
	VADDPS Y13, Y3, Y3
	VADDPS Y12, Y4, Y4
	VADDPS Y13, Y5, Y5
	VADDPS Y12, Y6, Y6
	VADDPS Y13, Y7, Y7
	VADDPS Y12, Y8, Y8
	VADDPS Y13, Y9, Y9
	VADDPS Y12, Y10, Y10
	VADDPS Y13, Y11, Y11

kernel6x16AVX2Ex_relu:
	TESTQ $4, SI
	JE kernel6x16AVX2Ex_store
	VXORPS Y14, Y14, Y14
	VMAXPS Y14, Y0, Y0
	VMAXPS Y14, Y1, Y1
	VMAXPS Y14, Y2, Y2
	VMAXPS Y14, Y3, Y3
	VMAXPS Y14, Y4, Y4
	VMAXPS Y14, Y5, Y5
	VMAXPS Y14, Y6, Y6
	VMAXPS Y14, Y7, Y7
	VMAXPS Y14, Y8, Y8
	VMAXPS Y14, Y9, Y9
	VMAXPS Y14, Y10, Y10
	VMAXPS Y14, Y11, Y11

kernel6x16AVX2Ex_store:
	VMOVUPS Y0, 0(DI)
	VMOVUPS Y1, 32(DI)
	ADDQ DX, DI
	VMOVUPS Y2, 0(DI)
	VMOVUPS Y3, 32(DI)
	ADDQ DX, DI
	VMOVUPS Y4, 0(DI)
	VMOVUPS Y5, 32(DI)
	ADDQ DX, DI
	VMOVUPS Y6, 0(DI)
	VMOVUPS Y7, 32(DI)
	ADDQ DX, DI
	VMOVUPS Y8, 0(DI)
	VMOVUPS Y9, 32(DI)
	ADDQ DX, DI
	VMOVUPS Y10, 0(DI)
	VMOVUPS Y11, 32(DI)
	VZEROUPPER
	RET

// func dots32AVX2(n int, x *float32, idx *int32, w *float32, acc *float32)
//
// For each of 32 lanes j: acc[j] = fma(x[idx[j]+p], w[p], acc[j]) for
// p = 0, 1, ..., n-1 in turn, one rounding per step: the sums the GEMM
// kernels above form for one column of C, with the rows of A gathered
// from memory (idx: element offsets of the rows from x) instead of packed.
TEXT ·dots32AVX2(SB), NOSPLIT, $0-40
	MOVQ n+0(FP), CX
	MOVQ x+8(FP), AX
	MOVQ idx+16(FP), BX
	MOVQ w+24(FP), DX
	MOVQ acc+32(FP), DI
	VMOVDQU 0(BX), Y0
	VMOVDQU 32(BX), Y1
	VMOVDQU 64(BX), Y2
	VMOVDQU 96(BX), Y3
	VMOVUPS 0(DI), Y4
	VMOVUPS 32(DI), Y5
	VMOVUPS 64(DI), Y6
	VMOVUPS 96(DI), Y7
	VPCMPEQD Y13, Y13, Y13
	TESTQ CX, CX
	JE dots32AVX2_done
dots32AVX2_loop:
	VBROADCASTSS 0(DX), Y8
	VMOVDQA Y13, Y14
	VGATHERDPS Y14, (AX)(Y0*4), Y9
	VMOVDQA Y13, Y15
	VGATHERDPS Y15, (AX)(Y1*4), Y10
	VMOVDQA Y13, Y14
	VGATHERDPS Y14, (AX)(Y2*4), Y11
	VMOVDQA Y13, Y15
	VGATHERDPS Y15, (AX)(Y3*4), Y12
	VFMADD231PS Y8, Y9, Y4
	VFMADD231PS Y8, Y10, Y5
	VFMADD231PS Y8, Y11, Y6
	VFMADD231PS Y8, Y12, Y7
	ADDQ $4, AX
	ADDQ $4, DX
	DECQ CX
	JNZ dots32AVX2_loop
dots32AVX2_done:
	VMOVUPS Y4, 0(DI)
	VMOVUPS Y5, 32(DI)
	VMOVUPS Y6, 64(DI)
	VMOVUPS Y7, 96(DI)
	VZEROUPPER
	RET

// func kernel6x32AVX512Ex(kc int, a *float32, lda int, b, c *float32, ldc int, flags int, bias *float32)
//
// The AVX-512 micro-kernel: a 6x32 tile as described at the top, with two
// additions (the plain kernel is lda = 0 with flags 0 or 1). A is read in place
// when lda > 0: row i of the tile at a + i*lda (lda in elements), one
// element per step, so that no packed copy of A is needed; lda == 0 means
// a packed panel as above. After the sums, flags say what is done to the
// tile before it is stored: bit 0 overwrite C (otherwise the sums are added
// to it), bit 1 add bias[j] to column j, bit 2 replace each value v by
// max(v, 0) (ReLU). Each step is the same operation whether A is packed
// or read in place, so the sums are the same bits.
//
// Bit 3 selects bfloat16 products (a CPU with AVX512_BF16 only): A is read
// in place (lda > 0, in 32-bit words) and each 32-bit word of A and B holds
// two bfloat16 values, k-steps 2p (low half) and 2p+1 (high half); B's step
// is 32 such words, one per column, and kc counts pairs. Each pair step is
// one VDPBF16PS (assembled from its bytes: the Go assembler lacks it), which
// adds both exact products to the float32 sums.
//
// Bit 4 (float32 only) sums columns 0-15 alone, for a tile at the right
// edge of C (see below).
TEXT ·kernel6x32AVX512Ex(SB), NOSPLIT, $0-64
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), AX
	MOVQ lda+16(FP), R8
	MOVQ b+24(FP), BX
	MOVQ c+32(FP), DI
	MOVQ ldc+40(FP), DX
	MOVQ flags+48(FP), SI
	MOVQ bias+56(FP), R10
	SHLQ $2, DX
	SHLQ $2, R8
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	TESTQ CX, CX
	JE kernel6x32AVX512Ex_epilogue
	TESTQ $8, SI
	JNE kernel6x32AVX512Ex_bf16
	TESTQ $16, SI
	JNE kernel6x32AVX512Ex_half
	TESTQ R8, R8
	JNE kernel6x32AVX512Ex_direct

kernel6x32AVX512Ex_packed:
	VMOVUPS 0(BX), Z12
	VMOVUPS 64(BX), Z13
	VBROADCASTSS 0(AX), Z14
	VFMADD231PS Z12, Z14, Z0
	VFMADD231PS Z13, Z14, Z1
	VBROADCASTSS 4(AX), Z15
	VFMADD231PS Z12, Z15, Z2
	VFMADD231PS Z13, Z15, Z3
	VBROADCASTSS 8(AX), Z14
	VFMADD231PS Z12, Z14, Z4
	VFMADD231PS Z13, Z14, Z5
	VBROADCASTSS 12(AX), Z15
	VFMADD231PS Z12, Z15, Z6
	VFMADD231PS Z13, Z15, Z7
	VBROADCASTSS 16(AX), Z14
	VFMADD231PS Z12, Z14, Z8
	VFMADD231PS Z13, Z14, Z9
	VBROADCASTSS 20(AX), Z15
	VFMADD231PS Z12, Z15, Z10
	VFMADD231PS Z13, Z15, Z11
	ADDQ $24, AX
	ADDQ $128, BX
	DECQ CX
	JNZ kernel6x32AVX512Ex_packed
	JMP kernel6x32AVX512Ex_epilogue

kernel6x32AVX512Ex_direct:
	LEAQ (AX)(R8*2), R9
	ADDQ R8, R9

kernel6x32AVX512Ex_dloop:
	VMOVUPS 0(BX), Z12
	VMOVUPS 64(BX), Z13
	VBROADCASTSS (AX), Z16
	VFMADD231PS Z12, Z16, Z0
	VFMADD231PS Z13, Z16, Z1
	VBROADCASTSS (AX)(R8*1), Z17
	VFMADD231PS Z12, Z17, Z2
	VFMADD231PS Z13, Z17, Z3
	VBROADCASTSS (AX)(R8*2), Z18
	VFMADD231PS Z12, Z18, Z4
	VFMADD231PS Z13, Z18, Z5
	VBROADCASTSS (R9), Z19
	VFMADD231PS Z12, Z19, Z6
	VFMADD231PS Z13, Z19, Z7
	VBROADCASTSS (R9)(R8*1), Z20
	VFMADD231PS Z12, Z20, Z8
	VFMADD231PS Z13, Z20, Z9
	VBROADCASTSS (R9)(R8*2), Z21
	VFMADD231PS Z12, Z21, Z10
	VFMADD231PS Z13, Z21, Z11
	ADDQ $4, AX
	ADDQ $4, R9
	ADDQ $128, BX
	DECQ CX
	JNZ kernel6x32AVX512Ex_dloop
	JMP kernel6x32AVX512Ex_epilogue

// Bit 4: columns 0-15 only (a tile at the right edge of C with at most 16
// columns): the same steps on the first of the two B vectors, so those
// columns get the bits of the full tile in half the multiply-adds; the
// accumulators of columns 16-31 stay zero.
kernel6x32AVX512Ex_half:
	TESTQ R8, R8
	JNE kernel6x32AVX512Ex_hdirect

kernel6x32AVX512Ex_hpacked:
	VMOVUPS 0(BX), Z12
	VBROADCASTSS 0(AX), Z14
	VFMADD231PS Z12, Z14, Z0
	VBROADCASTSS 4(AX), Z15
	VFMADD231PS Z12, Z15, Z2
	VBROADCASTSS 8(AX), Z16
	VFMADD231PS Z12, Z16, Z4
	VBROADCASTSS 12(AX), Z17
	VFMADD231PS Z12, Z17, Z6
	VBROADCASTSS 16(AX), Z18
	VFMADD231PS Z12, Z18, Z8
	VBROADCASTSS 20(AX), Z19
	VFMADD231PS Z12, Z19, Z10
	ADDQ $24, AX
	ADDQ $128, BX
	DECQ CX
	JNZ kernel6x32AVX512Ex_hpacked
	JMP kernel6x32AVX512Ex_epilogue

kernel6x32AVX512Ex_hdirect:
	LEAQ (AX)(R8*2), R9
	ADDQ R8, R9

kernel6x32AVX512Ex_hdloop:
	VMOVUPS 0(BX), Z12
	VBROADCASTSS (AX), Z16
	VFMADD231PS Z12, Z16, Z0
	VBROADCASTSS (AX)(R8*1), Z17
	VFMADD231PS Z12, Z17, Z2
	VBROADCASTSS (AX)(R8*2), Z18
	VFMADD231PS Z12, Z18, Z4
	VBROADCASTSS (R9), Z19
	VFMADD231PS Z12, Z19, Z6
	VBROADCASTSS (R9)(R8*1), Z20
	VFMADD231PS Z12, Z20, Z8
	VBROADCASTSS (R9)(R8*2), Z21
	VFMADD231PS Z12, Z21, Z10
	ADDQ $4, AX
	ADDQ $4, R9
	ADDQ $128, BX
	DECQ CX
	JNZ kernel6x32AVX512Ex_hdloop
	JMP kernel6x32AVX512Ex_epilogue

kernel6x32AVX512Ex_epilogue:
	TESTQ $1, SI
	JNE kernel6x32AVX512Ex_bias
	MOVQ DI, R11
	VADDPS 0(R11), Z0, Z0
	VADDPS 64(R11), Z1, Z1
	ADDQ DX, R11
	VADDPS 0(R11), Z2, Z2
	VADDPS 64(R11), Z3, Z3
	ADDQ DX, R11
	VADDPS 0(R11), Z4, Z4
	VADDPS 64(R11), Z5, Z5
	ADDQ DX, R11
	VADDPS 0(R11), Z6, Z6
	VADDPS 64(R11), Z7, Z7
	ADDQ DX, R11
	VADDPS 0(R11), Z8, Z8
	VADDPS 64(R11), Z9, Z9
	ADDQ DX, R11
	VADDPS 0(R11), Z10, Z10
	VADDPS 64(R11), Z11, Z11

kernel6x32AVX512Ex_bias:
	TESTQ $2, SI
	JE kernel6x32AVX512Ex_relu
	VMOVUPS 0(R10), Z12
	VMOVUPS 64(R10), Z13
	VADDPS Z12, Z0, Z0
	VADDPS Z13, Z1, Z1
	VADDPS Z12, Z2, Z2
	VADDPS Z13, Z3, Z3
	VADDPS Z12, Z4, Z4
	VADDPS Z13, Z5, Z5
	VADDPS Z12, Z6, Z6
	VADDPS Z13, Z7, Z7
	VADDPS Z12, Z8, Z8
	VADDPS Z13, Z9, Z9
	VADDPS Z12, Z10, Z10
	VADDPS Z13, Z11, Z11

kernel6x32AVX512Ex_relu:
	TESTQ $4, SI
	JE kernel6x32AVX512Ex_store
	VPXORD Z14, Z14, Z14
	VMAXPS Z14, Z0, Z0
	VMAXPS Z14, Z1, Z1
	VMAXPS Z14, Z2, Z2
	VMAXPS Z14, Z3, Z3
	VMAXPS Z14, Z4, Z4
	VMAXPS Z14, Z5, Z5
	VMAXPS Z14, Z6, Z6
	VMAXPS Z14, Z7, Z7
	VMAXPS Z14, Z8, Z8
	VMAXPS Z14, Z9, Z9
	VMAXPS Z14, Z10, Z10
	VMAXPS Z14, Z11, Z11

kernel6x32AVX512Ex_store:
	VMOVUPS Z0, 0(DI)
	VMOVUPS Z1, 64(DI)
	ADDQ DX, DI
	VMOVUPS Z2, 0(DI)
	VMOVUPS Z3, 64(DI)
	ADDQ DX, DI
	VMOVUPS Z4, 0(DI)
	VMOVUPS Z5, 64(DI)
	ADDQ DX, DI
	VMOVUPS Z6, 0(DI)
	VMOVUPS Z7, 64(DI)
	ADDQ DX, DI
	VMOVUPS Z8, 0(DI)
	VMOVUPS Z9, 64(DI)
	ADDQ DX, DI
	VMOVUPS Z10, 0(DI)
	VMOVUPS Z11, 64(DI)
	VZEROUPPER
	RET

kernel6x32AVX512Ex_bf16:
	LEAQ (AX)(R8*2), R9
	ADDQ R8, R9

kernel6x32AVX512Ex_bfloop:
	VMOVUPS 0(BX), Z12
	VMOVUPS 64(BX), Z13
	VBROADCASTSS (AX), Z16
	BYTE $0x62; BYTE $0xd2; BYTE $0x7e; BYTE $0x40; BYTE $0x52; BYTE $0xc4  // VDPBF16PS Z12, Z16, Z0
	BYTE $0x62; BYTE $0xd2; BYTE $0x7e; BYTE $0x40; BYTE $0x52; BYTE $0xcd  // VDPBF16PS Z13, Z16, Z1
	VBROADCASTSS (AX)(R8*1), Z17
	BYTE $0x62; BYTE $0xd2; BYTE $0x76; BYTE $0x40; BYTE $0x52; BYTE $0xd4  // VDPBF16PS Z12, Z17, Z2
	BYTE $0x62; BYTE $0xd2; BYTE $0x76; BYTE $0x40; BYTE $0x52; BYTE $0xdd  // VDPBF16PS Z13, Z17, Z3
	VBROADCASTSS (AX)(R8*2), Z18
	BYTE $0x62; BYTE $0xd2; BYTE $0x6e; BYTE $0x40; BYTE $0x52; BYTE $0xe4  // VDPBF16PS Z12, Z18, Z4
	BYTE $0x62; BYTE $0xd2; BYTE $0x6e; BYTE $0x40; BYTE $0x52; BYTE $0xed  // VDPBF16PS Z13, Z18, Z5
	VBROADCASTSS (R9), Z19
	BYTE $0x62; BYTE $0xd2; BYTE $0x66; BYTE $0x40; BYTE $0x52; BYTE $0xf4  // VDPBF16PS Z12, Z19, Z6
	BYTE $0x62; BYTE $0xd2; BYTE $0x66; BYTE $0x40; BYTE $0x52; BYTE $0xfd  // VDPBF16PS Z13, Z19, Z7
	VBROADCASTSS (R9)(R8*1), Z20
	BYTE $0x62; BYTE $0x52; BYTE $0x5e; BYTE $0x40; BYTE $0x52; BYTE $0xc4  // VDPBF16PS Z12, Z20, Z8
	BYTE $0x62; BYTE $0x52; BYTE $0x5e; BYTE $0x40; BYTE $0x52; BYTE $0xcd  // VDPBF16PS Z13, Z20, Z9
	VBROADCASTSS (R9)(R8*2), Z21
	BYTE $0x62; BYTE $0x52; BYTE $0x56; BYTE $0x40; BYTE $0x52; BYTE $0xd4  // VDPBF16PS Z12, Z21, Z10
	BYTE $0x62; BYTE $0x52; BYTE $0x56; BYTE $0x40; BYTE $0x52; BYTE $0xdd  // VDPBF16PS Z13, Z21, Z11
	ADDQ $4, AX
	ADDQ $4, R9
	ADDQ $128, BX
	DECQ CX
	JNZ kernel6x32AVX512Ex_bfloop
	JMP kernel6x32AVX512Ex_epilogue

// func dots8x8AVX2(n8 int, x *float32, ld int, w *float32, acc *float32)
//
// dots32AVX2's sums for 8 rows (row i at x + i*ld), 8 steps at a time:
// each block loads 8 values of each row, transposes the 8x8 block in
// registers so that register t holds column t of it, and accumulates the
// columns in order t = 0, 1, ..., 7 with one FMA each, so every lane is the
// same chain of roundings as in dots32AVX2, without gathers. n8 is the
// number of blocks (8*n8 steps).
TEXT ·dots8x8AVX2(SB), NOSPLIT, $0-40
	MOVQ n8+0(FP), CX
	MOVQ x+8(FP), AX
	MOVQ ld+16(FP), R8
	MOVQ w+24(FP), DX
	MOVQ acc+32(FP), DI
	SHLQ $2, R8
	VMOVUPS 0(DI), Y15
	TESTQ CX, CX
	JE dots8x8AVX2_done
dots8x8AVX2_loop:
	LEAQ (AX)(R8*2), R9
	LEAQ (AX)(R8*4), R10
	LEAQ (R10)(R8*2), R11
	VMOVUPS (AX), Y0
	VMOVUPS (AX)(R8*1), Y1
	VMOVUPS (R9), Y2
	VMOVUPS (R9)(R8*1), Y3
	VMOVUPS (R10), Y4
	VMOVUPS (R10)(R8*1), Y5
	VMOVUPS (R11), Y6
	VMOVUPS (R11)(R8*1), Y7
	// t0..t7 in Y8, Y9, Y0, Y1, Y10, Y11, Y12, Y13.
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y0
	VUNPCKHPS Y3, Y2, Y1
	VUNPCKLPS Y5, Y4, Y10
	VUNPCKHPS Y5, Y4, Y11
	VUNPCKLPS Y7, Y6, Y12
	VUNPCKHPS Y7, Y6, Y13
	// tt0..tt7 in Y2, Y3, Y4, Y5, Y6, Y7, Y0, Y1.
	VSHUFPS $0x44, Y0, Y8, Y2
	VSHUFPS $0xEE, Y0, Y8, Y3
	VSHUFPS $0x44, Y1, Y9, Y4
	VSHUFPS $0xEE, Y1, Y9, Y5
	VSHUFPS $0x44, Y12, Y10, Y6
	VSHUFPS $0xEE, Y12, Y10, Y7
	VSHUFPS $0x44, Y13, Y11, Y0
	VSHUFPS $0xEE, Y13, Y11, Y1
	// Columns 0..7 in Y8, Y10, Y12, Y14, Y9, Y11, Y13, Y2.
	VPERM2F128 $0x20, Y6, Y2, Y8
	VPERM2F128 $0x31, Y6, Y2, Y9
	VPERM2F128 $0x20, Y7, Y3, Y10
	VPERM2F128 $0x31, Y7, Y3, Y11
	VPERM2F128 $0x20, Y0, Y4, Y12
	VPERM2F128 $0x31, Y0, Y4, Y13
	VPERM2F128 $0x20, Y1, Y5, Y14
	VPERM2F128 $0x31, Y1, Y5, Y2
	VBROADCASTSS 0(DX), Y3
	VFMADD231PS Y3, Y8, Y15
	VBROADCASTSS 4(DX), Y3
	VFMADD231PS Y3, Y10, Y15
	VBROADCASTSS 8(DX), Y3
	VFMADD231PS Y3, Y12, Y15
	VBROADCASTSS 12(DX), Y3
	VFMADD231PS Y3, Y14, Y15
	VBROADCASTSS 16(DX), Y3
	VFMADD231PS Y3, Y9, Y15
	VBROADCASTSS 20(DX), Y3
	VFMADD231PS Y3, Y11, Y15
	VBROADCASTSS 24(DX), Y3
	VFMADD231PS Y3, Y13, Y15
	VBROADCASTSS 28(DX), Y3
	VFMADD231PS Y3, Y2, Y15
	ADDQ $32, AX
	ADDQ $32, DX
	DECQ CX
	JNZ dots8x8AVX2_loop
dots8x8AVX2_done:
	VMOVUPS Y15, 0(DI)
	VZEROUPPER
	RET

// func roundBF16AVX512(n16 int, src *float32, dst *uint16)
//
// Rounds 16*n16 float32 values to bfloat16 as BF16Bits does: round to
// nearest, ties to even, by adding 0x7fff plus the lowest kept bit and
// keeping the top half; a NaN keeps its top half with the quiet bit set.
TEXT ·roundBF16AVX512(SB), NOSPLIT, $0-24
	MOVQ n16+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ dst+16(FP), DI
	MOVL $1, AX
	VPBROADCASTD AX, Z10
	MOVL $0x7fff, AX
	VPBROADCASTD AX, Z11
	MOVL $0x7fffffff, AX
	VPBROADCASTD AX, Z12
	MOVL $0x7f800000, AX
	VPBROADCASTD AX, Z13
	MOVL $0x400000, AX
	VPBROADCASTD AX, Z14
	TESTQ CX, CX
	JE roundBF16AVX512_done
roundBF16AVX512_loop:
	VMOVDQU32 (SI), Z0
	VPSRLD $16, Z0, Z1
	VPANDD Z10, Z1, Z1
	VPADDD Z11, Z0, Z2
	VPADDD Z1, Z2, Z2
	VPANDD Z12, Z0, Z3
	VPCMPUD $6, Z13, Z3, K1
	VPORD Z14, Z0, K1, Z2
	VPSRLD $16, Z2, Z2
	VPMOVDW Z2, (DI)
	ADDQ $64, SI
	ADDQ $32, DI
	DECQ CX
	JNZ roundBF16AVX512_loop
roundBF16AVX512_done:
	VZEROUPPER
	RET
