//go:build amd64

#include "textflag.h"

// Constants, each broadcast to all 16 lanes with VBROADCASTSS.
DATA c_log2e<>+0(SB)/4, $0x3fb8aa3b  // log2(e)
GLOBL c_log2e<>(SB), RODATA|NOPTR, $4
DATA c_ln2hi<>+0(SB)/4, $0x3f318000  // 0.693359375
GLOBL c_ln2hi<>(SB), RODATA|NOPTR, $4
DATA c_ln2lo<>+0(SB)/4, $0xb95e8083  // -2.12194440e-4
GLOBL c_ln2lo<>(SB), RODATA|NOPTR, $4
DATA c_one<>+0(SB)/4, $0x3f800000    // 1
GLOBL c_one<>(SB), RODATA|NOPTR, $4
DATA c_two<>+0(SB)/4, $0x40000000    // 2
GLOBL c_two<>(SB), RODATA|NOPTR, $4
DATA c_half<>+0(SB)/4, $0x3f000000   // 1/2
GLOBL c_half<>(SB), RODATA|NOPTR, $4
DATA c_6<>+0(SB)/4, $0x3e2aaaab      // 1/6
GLOBL c_6<>(SB), RODATA|NOPTR, $4
DATA c_24<>+0(SB)/4, $0x3d2aaaab     // 1/24
GLOBL c_24<>(SB), RODATA|NOPTR, $4
DATA c_120<>+0(SB)/4, $0x3c088889    // 1/120
GLOBL c_120<>(SB), RODATA|NOPTR, $4
DATA c_720<>+0(SB)/4, $0x3ab60b61    // 1/720
GLOBL c_720<>(SB), RODATA|NOPTR, $4
DATA c_5040<>+0(SB)/4, $0x39500d01   // 1/5040
GLOBL c_5040<>(SB), RODATA|NOPTR, $4
DATA c_87<>+0(SB)/4, $0x42ae0000     // 87
GLOBL c_87<>(SB), RODATA|NOPTR, $4
DATA c_m87<>+0(SB)/4, $0xc2ae0000    // -87
GLOBL c_m87<>(SB), RODATA|NOPTR, $4
DATA c_tanhmax<>+0(SB)/4, $0x4111999a // 9.1
GLOBL c_tanhmax<>(SB), RODATA|NOPTR, $4
DATA c_abs<>+0(SB)/4, $0x7fffffff
GLOBL c_abs<>(SB), RODATA|NOPTR, $4
DATA c_sign<>+0(SB)/4, $0x80000000
GLOBL c_sign<>(SB), RODATA|NOPTR, $4
DATA c_ninf<>+0(SB)/4, $0xff800000   // -Inf
GLOBL c_ninf<>(SB), RODATA|NOPTR, $4

// LOADCONSTS broadcasts the shared constants into Z16-Z31.
#define LOADCONSTS \
	VBROADCASTSS c_log2e<>(SB), Z16 \
	VBROADCASTSS c_ln2hi<>(SB), Z17 \
	VBROADCASTSS c_ln2lo<>(SB), Z18 \
	VBROADCASTSS c_one<>(SB), Z19 \
	VBROADCASTSS c_half<>(SB), Z20 \
	VBROADCASTSS c_6<>(SB), Z21 \
	VBROADCASTSS c_24<>(SB), Z22 \
	VBROADCASTSS c_120<>(SB), Z23 \
	VBROADCASTSS c_720<>(SB), Z24 \
	VBROADCASTSS c_5040<>(SB), Z25 \
	VBROADCASTSS c_87<>(SB), Z26 \
	VBROADCASTSS c_m87<>(SB), Z27 \
	VBROADCASTSS c_two<>(SB), Z28 \
	VBROADCASTSS c_tanhmax<>(SB), Z29 \
	VBROADCASTSS c_abs<>(SB), Z30 \
	VBROADCASTSS c_sign<>(SB), Z31

// REDUCE splits x (in R) as x = n*ln2 + r: leaves n in N and r in R.
#define REDUCE(R, N) \
	VMULPS Z16, R, N \
	VRNDSCALEPS $0, N, N \
	VFNMADD231PS Z17, N, R \
	VFNMADD231PS Z18, N, R

// POLY sets Q to 1 + r/2 + r²/6 + ... + r⁶/5040 for r in R, so that
// e^r - 1 = r*Q.
#define POLY(R, Q) \
	VMOVAPS Z25, Q \
	VFMADD213PS Z24, R, Q \
	VFMADD213PS Z23, R, Q \
	VFMADD213PS Z22, R, Q \
	VFMADD213PS Z21, R, Q \
	VFMADD213PS Z20, R, Q \
	VFMADD213PS Z19, R, Q

// func sigmoidAVX512(x *float32, n int)
// x[i] = 1 / (1 + e^-x[i]) for i < n, n a multiple of 16.
TEXT ·sigmoidAVX512(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	SHRQ $4, CX
	JZ   sig_done
	LOADCONSTS

sig_loop:
	VMOVUPS (DI), Z0
	VPXORD  Z31, Z0, Z0   // y = -x
	VMINPS  Z26, Z0, Z0
	VMAXPS  Z27, Z0, Z0
	REDUCE(Z0, Z1)
	POLY(Z0, Z2)
	VFMADD213PS Z19, Z0, Z2 // e^r = 1 + r*Q
	VSCALEFPS   Z1, Z2, Z2  // e^y = e^r * 2^n
	VADDPS      Z19, Z2, Z2
	VDIVPS      Z2, Z19, Z3
	VMOVUPS     Z3, (DI)
	ADDQ        $64, DI
	DECQ        CX
	JNZ         sig_loop
	VZEROUPPER

sig_done:
	RET

// func tanhAVX512(x *float32, n int)
// x[i] = tanh(x[i]) for i < n, n a multiple of 16, as
// sign(x) * expm1(2|x|) / (expm1(2|x|) + 2).
TEXT ·tanhAVX512(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	SHRQ $4, CX
	JZ   tanh_done
	LOADCONSTS

tanh_loop:
	VMOVUPS (DI), Z0
	VPANDD  Z31, Z0, Z5   // sign
	VPANDD  Z30, Z0, Z0   // |x|
	VMINPS  Z29, Z0, Z0
	VADDPS  Z0, Z0, Z0    // 2|x|
	REDUCE(Z0, Z1)
	POLY(Z0, Z2)
	VMULPS      Z0, Z2, Z2  // q = e^r - 1
	VSCALEFPS   Z1, Z19, Z4 // s = 2^n
	VSUBPS      Z19, Z4, Z6 // s - 1
	VFMADD231PS Z4, Z2, Z6  // e = s*q + (s-1)
	VADDPS      Z28, Z6, Z7 // e + 2
	VDIVPS      Z7, Z6, Z6
	VPORD       Z5, Z6, Z6
	VMOVUPS     Z6, (DI)
	ADDQ        $64, DI
	DECQ        CX
	JNZ         tanh_loop
	VZEROUPPER

tanh_done:
	RET

// func sumExpAVX512(x *float32, n int, shift float32, acc *[16]float32)
// acc[l] = sum over i ≡ l (mod 16), i < n, of e^(x[i]-shift); n a multiple
// of 16. Arguments below -87 are clamped (e^-87 ≈ 1.6e-38).
TEXT ·sumExpAVX512(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS shift+16(FP), Z8
	MOVQ         acc+24(FP), SI
	LOADCONSTS
	VPXORD       Z9, Z9, Z9
	VPXORD       Z10, Z10, Z10
	SHRQ         $4, CX
	JZ           sumexp_store

sumexp_loop:
	VMOVUPS (DI), Z0
	VSUBPS  Z8, Z0, Z0
	VMINPS  Z26, Z0, Z0
	VMAXPS  Z27, Z0, Z0
	REDUCE(Z0, Z1)
	POLY(Z0, Z2)
	VFMADD213PS Z19, Z0, Z2
	VSCALEFPS   Z1, Z2, Z2
	VADDPS      Z2, Z9, Z9
	ADDQ        $64, DI
	DECQ        CX
	JNZ         sumexp_loop

sumexp_store:
	VMOVUPS Z9, (SI)
	VZEROUPPER
	RET

// func maxAVX512(x *float32, n int, acc *[16]float32)
// acc[l] = max over i ≡ l (mod 16), i < n, of x[i] (-Inf if none); n a
// multiple of 16.
TEXT ·maxAVX512(SB), NOSPLIT, $0-24
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	MOVQ         acc+16(FP), SI
	VBROADCASTSS c_ninf<>(SB), Z0
	VMOVAPS      Z0, Z1
	SHRQ         $5, CX
	JZ           max_tail

max_loop:
	VMAXPS (DI), Z0, Z0
	VMAXPS 64(DI), Z1, Z1
	ADDQ   $128, DI
	DECQ   CX
	JNZ    max_loop

max_tail:
	MOVQ n+8(FP), CX
	ANDQ $16, CX
	JZ   max_store
	VMAXPS (DI), Z0, Z0

max_store:
	VMAXPS  Z1, Z0, Z0
	VMOVUPS Z0, (SI)
	VZEROUPPER
	RET

// func expShiftAVX512(x *float32, n int, shift float32, acc *[16]float32)
// x[i] = e^(x[i]-shift) for i < n, n a multiple of 16, with arguments
// clamped to [-87, 87]; acc receives the per-lane sums of the results.
TEXT ·expShiftAVX512(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), DI
	MOVQ         n+8(FP), CX
	VBROADCASTSS shift+16(FP), Z8
	MOVQ         acc+24(FP), SI
	LOADCONSTS
	VPXORD       Z9, Z9, Z9
	SHRQ         $4, CX
	JZ           expshift_store

expshift_loop:
	VMOVUPS (DI), Z0
	VSUBPS  Z8, Z0, Z0
	VMINPS  Z26, Z0, Z0
	VMAXPS  Z27, Z0, Z0
	REDUCE(Z0, Z1)
	POLY(Z0, Z2)
	VFMADD213PS Z19, Z0, Z2
	VSCALEFPS   Z1, Z2, Z2
	VMOVUPS     Z2, (DI)
	VADDPS      Z2, Z9, Z9
	ADDQ        $64, DI
	DECQ        CX
	JNZ         expshift_loop

expshift_store:
	VMOVUPS Z9, (SI)
	VZEROUPPER
	RET

DATA c_gelu3<>+0(SB)/4, $0x3d372713  // 0.044715
GLOBL c_gelu3<>(SB), RODATA|NOPTR, $4
DATA c_geluc<>+0(SB)/4, $0x3f4c422a  // sqrt(2/pi)
GLOBL c_geluc<>(SB), RODATA|NOPTR, $4

// func geluAVX512(dst, src *float32, n int)
// dst[i] = 0.5*x * (1 + tanh(sqrt(2/pi) * (x + 0.044715*x*x*x))) for
// x = src[i], i < n, n a multiple of 16: the operations of the scalar GELU
// of package nn, one rounding each in the same order, with the tanh of
// tanhAVX512.
TEXT ·geluAVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), SI
	MOVQ src+8(FP), DI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   gelu_done
	LOADCONSTS
	VBROADCASTSS c_gelu3<>(SB), Z14
	VBROADCASTSS c_geluc<>(SB), Z15

gelu_loop:
	VMOVUPS (DI), Z8      // x
	VMULPS  Z14, Z8, Z0   // 0.044715*x
	VMULPS  Z8, Z0, Z0    // *x
	VMULPS  Z8, Z0, Z0    // *x
	VADDPS  Z0, Z8, Z0    // x + ...
	VMULPS  Z15, Z0, Z0   // u = sqrt(2/pi) * (...)
	VPANDD  Z31, Z0, Z5   // tanh(u), as in tanhAVX512
	VPANDD  Z30, Z0, Z0
	VMINPS  Z29, Z0, Z0
	VADDPS  Z0, Z0, Z0
	REDUCE(Z0, Z1)
	POLY(Z0, Z2)
	VMULPS      Z0, Z2, Z2
	VSCALEFPS   Z1, Z19, Z4
	VSUBPS      Z19, Z4, Z6
	VFMADD231PS Z4, Z2, Z6
	VADDPS      Z28, Z6, Z7
	VDIVPS      Z7, Z6, Z6
	VPORD       Z5, Z6, Z6    // t
	VADDPS      Z19, Z6, Z6   // 1 + t
	VMULPS      Z20, Z8, Z8   // 0.5*x
	VMULPS      Z6, Z8, Z8
	VMOVUPS     Z8, (SI)
	ADDQ        $64, SI
	ADDQ        $64, DI
	DECQ        CX
	JNZ         gelu_loop
	VZEROUPPER

gelu_done:
	RET

// func normRowAVX512(x, y, xhat *float32, n int, mean, rstd float32, gain, bias *float32)
// For j < n (a multiple of 16): h = (x[j]-mean)*rstd; xhat[j] = h unless
// xhat is nil; y[j] = h*gain[j] + bias[j], one rounding per operation.
TEXT ·normRowAVX512(SB), NOSPLIT, $0-56
	MOVQ x+0(FP), AX
	MOVQ y+8(FP), DI
	MOVQ xhat+16(FP), SI
	MOVQ n+24(FP), CX
	VBROADCASTSS mean+32(FP), Z1
	VBROADCASTSS rstd+36(FP), Z2
	MOVQ gain+40(FP), BX
	MOVQ bias+48(FP), DX
	SHRQ $4, CX
	JZ nr_done

nr_loop:
	VMOVUPS (AX), Z3
	VSUBPS Z1, Z3, Z3
	VMULPS Z2, Z3, Z3
	TESTQ SI, SI
	JE nr_nohat
	VMOVUPS Z3, (SI)
	ADDQ $64, SI

nr_nohat:
	VMULPS (BX), Z3, Z3
	VADDPS (DX), Z3, Z3
	VMOVUPS Z3, (DI)
	ADDQ $64, AX
	ADDQ $64, DI
	ADDQ $64, BX
	ADDQ $64, DX
	DECQ CX
	JNZ nr_loop

nr_done:
	VZEROUPPER
	RET

// func meanVar16TAVX512(xt *float32, d int, out *[32]float32, fd float32)
// For 16 rows of d values, transposed so that xt[p*16+l] is value p of row
// l, lane l computes, one rounding per step as a scalar loop does:
// m = (x_0 + x_1 + ... + x_{d-1}) / d, then
// v = ((x_0-m)*(x_0-m) + ... + (x_{d-1}-m)*(x_{d-1}-m)) / d,
// and stores m in out[l] and v in out[16+l]. d > 0 and fd = float32(d).
TEXT ·meanVar16TAVX512(SB), NOSPLIT, $0-28
	MOVQ xt+0(FP), AX
	MOVQ d+8(FP), CX
	MOVQ out+16(FP), DI
	VBROADCASTSS fd+24(FP), Z4
	VPXORD Z2, Z2, Z2
	MOVQ AX, SI
	MOVQ CX, DX

mvt_sum:
	VADDPS (SI), Z2, Z2
	ADDQ $64, SI
	DECQ DX
	JNZ mvt_sum

	VDIVPS Z4, Z2, Z2
	VPXORD Z5, Z5, Z5
	MOVQ AX, SI
	MOVQ CX, DX

mvt_var:
	VMOVUPS (SI), Z3
	VSUBPS Z2, Z3, Z3
	VMULPS Z3, Z3, Z3
	VADDPS Z3, Z5, Z5
	ADDQ $64, SI
	DECQ DX
	JNZ mvt_var

	VDIVPS Z4, Z5, Z5
	VMOVUPS Z2, (DI)
	VMOVUPS Z5, 64(DI)
	VZEROUPPER
	RET

DATA c_absmask<>+0(SB)/4, $0x7fffffff
GLOBL c_absmask<>(SB), RODATA|NOPTR, $4

// func mulAVX512(dst, a, b *float32, n int)
// dst[i] = a[i]*b[i] for i < n, n a positive multiple of 16.
TEXT ·mulAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $4, CX

mul_loop:
	VMOVUPS (SI), Z0
	VMULPS  (DX), Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     mul_loop
	VZEROUPPER
	RET

// func absDiffAVX512(dst, a, b *float32, n int)
// dst[i] = a[i]-b[i] with its sign bit cleared, for i < n, n a positive
// multiple of 16.
TEXT ·absDiffAVX512(SB), NOSPLIT, $0-32
	MOVQ         dst+0(FP), DI
	MOVQ         a+8(FP), SI
	MOVQ         b+16(FP), DX
	MOVQ         n+24(FP), CX
	SHRQ         $4, CX
	VPBROADCASTD c_absmask<>(SB), Z1

absdiff_loop:
	VMOVUPS (SI), Z0
	VSUBPS  (DX), Z0, Z0
	VPANDD  Z1, Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     absdiff_loop
	VZEROUPPER
	RET

// func mulAddAVX512(dst, a, b, c, d *float32, n int)
// dst[i] = a[i]*b[i] + c[i]*d[i] for i < n, n a positive multiple of 16:
// two rounded products, then their rounded sum (no FMA), as the scalar
// loop computes it.
TEXT ·mulAddAVX512(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ c+24(FP), R8
	MOVQ d+32(FP), R9
	MOVQ n+40(FP), CX
	SHRQ $4, CX

muladd_loop:
	VMOVUPS (SI), Z0
	VMULPS  (DX), Z0, Z0
	VMOVUPS (R8), Z1
	VMULPS  (R9), Z1, Z1
	VADDPS  Z1, Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, R8
	ADDQ    $64, R9
	ADDQ    $64, DI
	DECQ    CX
	JNZ     muladd_loop
	VZEROUPPER
	RET
