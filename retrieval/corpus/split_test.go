package corpus

import (
	"slices"
	"testing"
)

func TestSplitSentences(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"only spaces", "   ", nil},
		{"no terminal", "a fragment without end", []string{"a fragment without end"}},
		{"two plain", "The cat sat. The dog ran.", []string{"The cat sat.", "The dog ran."}},
		{"question", "Is it? Yes.", []string{"Is it?", "Yes."}},
		{"exclamation", "Stop! Now.", []string{"Stop!", "Now."}},
		{"interrobang run", "Really?! Yes!!! Fine.", []string{"Really?!", "Yes!!!", "Fine."}},
		{"Mr", "Mr. Smith left. He was late.", []string{"Mr. Smith left.", "He was late."}},
		{"Mrs Dr", "Mrs. Jones met Dr. Who today.", []string{"Mrs. Jones met Dr. Who today."}},
		{"St name", "He visited St. Louis. It rained.", []string{"He visited St. Louis.", "It rained."}},
		{"St street end", "He lives on Main St. The house is red.", []string{"He lives on Main St.", "The house is red."}},
		{"Jr name", "Sammy Davis Jr. Sang well.", []string{"Sammy Davis Jr. Sang well."}},
		{"Jr end", "He met Martin Luther King Jr. The crowd cheered.", []string{"He met Martin Luther King Jr.", "The crowd cheered."}},
		{"vs", "Roe vs. Wade was decided. Later it fell.", []string{"Roe vs. Wade was decided.", "Later it fell."}},
		{"etc end", "Apples, pears, etc. The rest is fruit.", []string{"Apples, pears, etc.", "The rest is fruit."}},
		{"etc mid", "Apples, pears, etc. are fruit.", []string{"Apples, pears, etc. are fruit."}},
		{"e.g.", "Use a tool, e.g. Grep, to search.", []string{"Use a tool, e.g. Grep, to search."}},
		{"i.e.", "One option, i.e. The first, wins.", []string{"One option, i.e. The first, wins."}},
		{"E.g. capitalised", "E.g. This works. Next one.", []string{"E.g. This works.", "Next one."}},
		{"U.S. adjective", "The U.S. Army grew. It won.", []string{"The U.S. Army grew.", "It won."}},
		{"U.S. end", "He moved to the U.S. The move was hard.", []string{"He moved to the U.S.", "The move was hard."}},
		{"U.K.", "The U.K. Parliament sat.", []string{"The U.K. Parliament sat."}},
		{"a.m. p.m.", "We met at 9 a.m. and left at 5 p.m. The day was long.", []string{"We met at 9 a.m. and left at 5 p.m.", "The day was long."}},
		{"No number", "This is Rule No. 1. Debian is free.", []string{"This is Rule No. 1.", "Debian is free."}},
		{"No answer", "No. I will not go.", []string{"No.", "I will not go."}},
		{"Fig", "See Fig. 3 for details. Then stop.", []string{"See Fig. 3 for details.", "Then stop."}},
		{"military titles", "Gen. Grant and Gov. Brown met Sen. Smith and Rep. Jones.", []string{"Gen. Grant and Gov. Brown met Sen. Smith and Rep. Jones."}},
		{"month", "It opened on Jan. 5 last year. Few came.", []string{"It opened on Jan. 5 last year.", "Few came."}},
		{"Inc Ltd Co", "Acme Inc. Shares rose. Foo Ltd. The end. Bar Co. Said so.", []string{"Acme Inc. Shares rose.", "Foo Ltd.", "The end.", "Bar Co. Said so."}},
		{"decimal", "Pi is 3.14 roughly. Next.", []string{"Pi is 3.14 roughly.", "Next."}},
		{"money", "It cost $1.5 million. That is a lot.", []string{"It cost $1.5 million.", "That is a lot."}},
		{"number end", "It ended in 1999. The next began.", []string{"It ended in 1999.", "The next began."}},
		{"initials", "J. R. R. Tolkien wrote it. George W. Bush read it.", []string{"J. R. R. Tolkien wrote it.", "George W. Bush read it."}},
		{"initial then initial A", "J. A. Smith came.", []string{"J. A. Smith came."}},
		{"initial end", "He chose Plan B. The plan failed.", []string{"He chose Plan B.", "The plan failed."}},
		{"quote after period", `He said "Stop." Then he left.`, []string{`He said "Stop."`, "Then he left."}},
		{"curly quote after period", "He said \u201cStop.\u201d Then he left.", []string{"He said \u201cStop.\u201d", "Then he left."}},
		{"quote then lowercase", `"Stop!" he said. Then left.`, []string{`"Stop!" he said.`, "Then left."}},
		{"question quote lowercase", `He asked "why?" and left.`, []string{`He asked "why?" and left.`}},
		{"bracket", "(See below.) Next comes this.", []string{"(See below.)", "Next comes this."}},
		{"bracket and quote", `It ended ("finally.") The end.`, []string{`It ended ("finally.")`, "The end."}},
		{"opening quote next", `He left. "Why?" she asked.`, []string{"He left.", `"Why?" she asked.`}},
		{"opening bracket next", "He left. (It was late.) Then.", []string{"He left.", "(It was late.)", "Then."}},
		{"ellipsis lowercase", "Wait... what happened?", []string{"Wait... what happened?"}},
		{"ellipsis uppercase", "Wait... What happened?", []string{"Wait...", "What happened?"}},
		{"ellipsis char", "Wait\u2026 what? Wait\u2026 No.", []string{"Wait\u2026 what?", "Wait\u2026", "No."}},
		{"ellipsis digit", "Count to... 5 now.", []string{"Count to... 5 now."}},
		{"spaced ellipsis", "Wait . . . what. Then . . . Go.", []string{"Wait . . . what.", "Then . . .", "Go."}},
		{"ellipsis quote", `"Wait..." He left.`, []string{`"Wait..."`, "He left."}},
		{"period lowercase", "The file foo. bar is odd.", []string{"The file foo. bar is odd."}},
		{"no space after", "See example.com.Then stop. Now.", []string{"See example.com.Then stop.", "Now."}},
		{"url end", "Visit example.com. It helps.", []string{"Visit example.com.", "It helps."}},
		{"enumeration", "1. Scope of the work. It is big.", []string{"1. Scope of the work.", "It is big."}},
		{"detached period", "It rained . The end .", []string{"It rained .", "The end ."}},
		{"Ph.D", "She got a Ph.D. in 2001. Then she left.", []string{"She got a Ph.D. in 2001.", "Then she left."}},
		{"dotted acronym", "The U.S.S.R. The end.", []string{"The U.S.S.R.", "The end."}},
		{"et al", "Smith et al. (2005) agree. So do we.", []string{"Smith et al. (2005) agree.", "So do we."}},
		{"non-ASCII upper", "Il est parti. \u00c9mile est venu.", []string{"Il est parti.", "\u00c9mile est venu."}},
		{"non-ASCII lower", "Es ist gut. \u00fcber alles.", []string{"Es ist gut. \u00fcber alles."}},
		{"trailing space", "One. Two. ", []string{"One.", "Two."}},
		{"only punctuation", "... ?! .", []string{"... ?! ."}},
		{"bare ellipsis joins previous", "It was new. . . . This world.", []string{"It was new. . . .", "This world."}},
		{"bare ellipsis opens paragraph", ". . . What now? Go.", []string{". . . What now?", "Go."}},
		{"bare quote joins previous", `He ran off . " . The end .`, []string{`He ran off . " .`, "The end ."}},
		{"bare trailing punctuation", "Done! ?!", []string{"Done! ?!"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := SplitSentences(tc.in)
			if !slices.Equal(got, tc.want) {
				t.Errorf("SplitSentences(%q)\n got  %q\n want %q", tc.in, got, tc.want)
			}
		})
	}
}
