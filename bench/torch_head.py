"""PyTorch CPU reference for the coherence head, one thread: the
interaction head (features [l, s, r, l*s, s*r, |l-s|, |s-r|] of 600-wide
sentence vectors -> 300 -> ReLU -> 1) and the paper's linear head
([l, s, r] -> 1), 1,024 (context, sentence) pairs per call, as
scoring/disc BenchmarkHead."""
import os
import time

# torch.set_num_threads bounds PyTorch's own pool, not the BLAS library's
# (Debian's PyTorch runs SGEMM on OpenBLAS): every pool is pinned before
# torch loads, so that "one thread" is one thread.
for _v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"
import torch  # noqa: E402

torch.set_num_threads(1)
n, d, hidden = 1024, 600, 300
l, s, r = (torch.rand(n, d) - 0.5 for _ in range(3))
inter1, inter2 = torch.nn.Linear(7 * d, hidden), torch.nn.Linear(hidden, 1)
linear = torch.nn.Linear(3 * d, 1)


def interaction():
    f = torch.cat([l, s, r, l * s, s * r, (l - s).abs(), (s - r).abs()], dim=1)
    return inter2(torch.relu(inter1(f)))


def lin():
    return linear(torch.cat([l, s, r], dim=1))


with torch.no_grad():
    for name, fn in (("interaction", interaction), ("linear", lin)):
        fn()
        reps, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < 2:
            fn()
            reps += 1
        print(f"head {name}: {n * reps / (time.perf_counter() - t0):.0f} pairs/s")
