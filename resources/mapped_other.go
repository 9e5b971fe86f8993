//go:build !unix

package resources

import "errors"

type vectorFile struct{}

func newVectorFile(int) (*vectorFile, error) {
	return nil, errors.New("mapped vectors need a unix system")
}

func (*vectorFile) add([]float32) error              { return nil }
func (*vectorFile) mapVectors() ([][]float32, error) { return nil, nil }
func (*vectorFile) discard()                         {}

type textArena struct{}

func newTextArena() (*textArena, error) {
	return nil, errors.New("a mapped chunk store needs a unix system")
}

func (*textArena) keep(s string) string { return s }
