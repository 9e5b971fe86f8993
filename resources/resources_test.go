package resources

import (
	"strings"
	"testing"
)

func TestUseBackendOncePerProcess(t *testing.T) {
	t.Cleanup(func() { backend = "" })
	if err := UseBackend("go"); err != nil {
		t.Fatal(err)
	}
	if err := UseBackend("go"); err != nil {
		t.Fatalf("the same backend again: %v", err)
	}
	if err := UseBackend("fortran"); err == nil || !strings.Contains(err.Error(), "unknown backend") {
		t.Fatalf("an unknown backend: %v", err)
	}
	// As if this process had chosen OpenBLAS (builds with -tags openblas).
	backend = "openblas"
	if err := UseBackend("go"); err == nil || !strings.Contains(err.Error(), "cannot switch") {
		t.Fatalf("a second backend: %v", err)
	}
}
