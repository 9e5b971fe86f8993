package nn

// MomentParams returns, for each of params, two parameters holding its
// Adam first and second moments, named "adam.m/<name>" and "adam.v/<name>",
// sharing the moments' memory (allocated here if no step was taken yet).
// Saving them with SaveSafetensors and loading them back with
// LoadSafetensors checkpoints the optimiser; Adam.Steps must be saved too.
func MomentParams(params []*Param) []*Param {
	out := make([]*Param, 0, 2*len(params))
	for _, p := range params {
		n := len(p.Value.Data)
		if len(p.m) != n {
			p.m, p.v = make([]float32, n), make([]float32, n)
		}
		shape := append([]int(nil), p.Value.Shape...)
		out = append(out,
			&Param{Name: "adam.m/" + p.Name, Value: FromData(p.m, shape...), Grad: NewTensor(shape...)},
			&Param{Name: "adam.v/" + p.Name, Value: FromData(p.v, shape...), Grad: NewTensor(shape...)})
	}
	return out
}
