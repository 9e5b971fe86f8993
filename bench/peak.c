/* peak: the rate of this core's widest multiply-add instructions, for
 * reading GEMM figures as a share of the machine's limit.
 *
 * Each loop keeps ACC independent chains of one instruction on registers
 * (no memory operands), so it runs at the instruction's issue rate once
 * ACC covers its latency. Built by bench/models.sh with
 * gcc -O2 -march=native and run on one core; prints one line per
 * instruction the CPU has:
 *   fp32-fma-<bits> <GFLOP/s>     (VFMADD231PS, 2 flops per lane)
 *   bf16-dot-512 <GFLOP/s>        (VDPBF16PS, 4 flops per 32-bit lane)
 */
#include <immintrin.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define ACC 16
#define STEPS 100000000L

static double seconds(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Each macro runs STEPS rounds of ACC instructions and prints the rate;
 * the sums are printed to stderr so that the loop is not dropped. */
#define MEASURE(name, type, zero, op, flops_per_op)                               \
	do {                                                                      \
		type acc[ACC];                                                    \
		for (int i = 0; i < ACC; i++) acc[i] = zero;                      \
		double t0 = seconds();                                            \
		for (long r = 0; r < STEPS; r++) {                                \
			_Pragma("GCC unroll 16") for (int i = 0; i < ACC; i++) op; \
		}                                                                 \
		double t = seconds() - t0;                                        \
		printf("%s %.1f\n", name, (double)STEPS * ACC * (flops_per_op) / t / 1e9); \
		float s = 0, buf[16];                                             \
		for (int i = 0; i < ACC; i++) {                                   \
			memcpy(buf, &acc[i], sizeof(type));                       \
			s += buf[0];                                              \
		}                                                                 \
		fprintf(stderr, "(%g)\n", s);                                     \
	} while (0)

int main(void) {
#if defined(__AVX512F__)
	__m512 a = _mm512_set1_ps(1e-7f), b = _mm512_set1_ps(0.999f);
	MEASURE("fp32-fma-512", __m512, _mm512_setzero_ps(), acc[i] = _mm512_fmadd_ps(a, b, acc[i]), 32);
#endif
#if defined(__FMA__)
	__m256 a8 = _mm256_set1_ps(1e-7f), b8 = _mm256_set1_ps(0.999f);
	MEASURE("fp32-fma-256", __m256, _mm256_setzero_ps(), acc[i] = _mm256_fmadd_ps(a8, b8, acc[i]), 16);
#endif
#if defined(__AVX512BF16__)
	__m512bh x = (__m512bh)_mm512_set1_epi32(0x3f803f80), y = (__m512bh)_mm512_set1_epi32(0x33d633d6);
	MEASURE("bf16-dot-512", __m512, _mm512_setzero_ps(), acc[i] = _mm512_dpbf16_ps(acc[i], x, y), 64);
#endif
	return 0;
}
