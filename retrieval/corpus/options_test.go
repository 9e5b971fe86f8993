package corpus

import (
	"strings"
	"testing"
)

func TestDefaults(t *testing.T) {
	want := Options{ChunkSize: 6, ChunkStride: 3, MaxParagraphBytes: 1 << 20, MaxLineBytes: 64 << 20, TextField: "text", IDField: "id"}
	if got := Defaults(); got != want {
		t.Errorf("Defaults() = %+v, want %+v", got, want)
	}
	if got := (Options{}).withDefaults(); got != want {
		t.Errorf("Options{}.withDefaults() = %+v, want %+v", got, want)
	}
	if err := Defaults().Validate(); err != nil {
		t.Errorf("Defaults().Validate() = %v", err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr []string // substrings of the error; none means valid
	}{
		{"zero value takes defaults", Options{}, nil},
		{"stride equals size", Options{ChunkSize: 4, ChunkStride: 4}, nil},
		{"size one", Options{ChunkSize: 1, ChunkStride: 1}, nil},
		{"stride over size", Options{ChunkSize: 2, ChunkStride: 3}, []string{"ChunkStride (3) must not exceed ChunkSize (2)"}},
		{"negative size", Options{ChunkSize: -1}, []string{"ChunkSize must be >= 1, got -1"}},
		{"negative stride", Options{ChunkStride: -2}, []string{"ChunkStride must be >= 1, got -2"}},
		{"negative limits", Options{MaxParagraphBytes: -1, MaxLineBytes: -5}, []string{"MaxParagraphBytes must be >= 1", "MaxLineBytes must be >= 1, got -5"}},
		{"custom fields", Options{TextField: "content", IDField: "url"}, nil},
		{"id field doc_id", Options{IDField: "doc_id"}, nil},
		{"text field paragraphs", Options{TextField: "paragraphs"}, []string{`TextField "paragraphs" is a field of the native shape`}},
		{"id field title", Options{IDField: "title"}, []string{`IDField "title" is a field of the native shape`}},
		{"same fields", Options{TextField: "body", IDField: "body"}, []string{`TextField and IDField are both "body"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.Validate()
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error")
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}
