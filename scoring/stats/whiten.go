package stats

import "math"

// Whitening returns the mean mu of the vectors xs (all of one length d) and
// the symmetric d x d matrix W = C^(-p/2) (row-major), where C is their
// covariance shrunk towards its mean eigenvalue: (1-alpha) C + alpha
// (tr C / d) I. With p = 1, W(x - mu) has the identity as covariance over
// xs (alpha 0); with p = 0, W is the identity.
func Whitening(xs [][]float32, p, alpha float64) (mu, w []float64) {
	d := len(xs[0])
	mu, cov := Covariance(xs)
	var tr float64
	for i := range d {
		tr += cov[i*d+i]
	}
	for i := range d {
		for j := range d {
			cov[i*d+j] *= 1 - alpha
		}
		cov[i*d+i] += alpha * tr / float64(d)
	}
	vals, vecs := SymEigen(cov, d)
	w = make([]float64, d*d)
	for k := range d {
		s := math.Pow(max(vals[k], 1e-12), -p/2)
		for i := range d {
			vik := vecs[i*d+k] * s
			for j := range d {
				w[i*d+j] += vik * vecs[j*d+k]
			}
		}
	}
	return mu, w
}

// Covariance returns the mean of the vectors xs (all of one length d) and
// their covariance (row-major d x d, divided by len(xs)).
func Covariance(xs [][]float32) (mu, cov []float64) {
	d := len(xs[0])
	mu = make([]float64, d)
	for _, g := range xs {
		for j, x := range g {
			mu[j] += float64(x)
		}
	}
	for j := range mu {
		mu[j] /= float64(len(xs))
	}
	cov = make([]float64, d*d)
	x := make([]float64, d)
	for _, g := range xs {
		for j := range x {
			x[j] = float64(g[j]) - mu[j]
		}
		for i := range d {
			xi := x[i]
			row := cov[i*d : i*d+d]
			for j := range d {
				row[j] += xi * x[j]
			}
		}
	}
	for i := range cov {
		cov[i] /= float64(len(xs))
	}
	return mu, cov
}

// SymEigen diagonalises the symmetric d x d matrix a (row-major, not
// changed) by cyclic Jacobi rotations: eigenvalues, and eigenvectors as
// the columns of a row-major d x d matrix.
func SymEigen(a []float64, d int) ([]float64, []float64) {
	m := append([]float64(nil), a...)
	v := make([]float64, d*d)
	for i := range d {
		v[i*d+i] = 1
	}
	for sweep := 0; sweep < 50; sweep++ {
		var off, diag float64
		for i := range d {
			diag += m[i*d+i] * m[i*d+i]
			for j := i + 1; j < d; j++ {
				off += m[i*d+j] * m[i*d+j]
			}
		}
		if off <= 1e-22*diag {
			break
		}
		for p := 0; p < d; p++ {
			for q := p + 1; q < d; q++ {
				apq := m[p*d+q]
				if math.Abs(apq) < 1e-300 {
					continue
				}
				theta := (m[q*d+q] - m[p*d+p]) / (2 * apq)
				t := math.Copysign(1, theta) / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for k := range d {
					mkp, mkq := m[k*d+p], m[k*d+q]
					m[k*d+p] = c*mkp - s*mkq
					m[k*d+q] = s*mkp + c*mkq
				}
				for k := range d {
					mpk, mqk := m[p*d+k], m[q*d+k]
					m[p*d+k] = c*mpk - s*mqk
					m[q*d+k] = s*mpk + c*mqk
				}
				for k := range d {
					vkp, vkq := v[k*d+p], v[k*d+q]
					v[k*d+p] = c*vkp - s*vkq
					v[k*d+q] = s*vkp + c*vkq
				}
			}
		}
	}
	vals := make([]float64, d)
	for i := range d {
		vals[i] = m[i*d+i]
	}
	return vals, v
}
