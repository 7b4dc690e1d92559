package extract

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// foldRef is white-space folding written plainly: split on HTML white
// space, drop empty fields, join with one space.
func foldRef(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r < 256 && spaceTable[byte(r)] }), " ")
}

func TestTextBufFolds(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	pieces := []string{"a", "word", "ünï", " ", "  ", "\n", "\t\r\n ", "\x01", "\x1f", "x\x00y", "\v", "\f", ".", "<"}
	for i := 0; i < 2000; i++ {
		var tb textBuf
		tb.limit = 1 << 20
		var all strings.Builder
		for j := r.IntN(30); j > 0; j-- {
			var chunk strings.Builder
			for k := r.IntN(8); k > 0; k-- {
				chunk.WriteString(pieces[r.IntN(len(pieces))])
			}
			if r.IntN(5) == 0 {
				tb.space() // an element boundary
				all.WriteByte(' ')
			}
			tb.add([]byte(chunk.String()))
			all.WriteString(chunk.String())
		}
		if got, want := string(tb.b), foldRef(all.String()); got != want {
			t.Fatalf("folded %q, want %q (input %q)", got, want, all.String())
		}
	}
}

func TestTextBufLimit(t *testing.T) {
	text := strings.Repeat("alpha  beta\n", 50)
	for limit := 1; limit < 80; limit++ {
		tb := textBuf{limit: limit}
		for _, chunk := range strings.SplitAfter(text, "\n") {
			tb.add([]byte(chunk))
		}
		want := foldRef(text)[:limit]
		want = strings.TrimRight(want, " ")
		if string(tb.b) != want || !tb.truncated {
			t.Fatalf("limit %d: %q (truncated %v), want %q", limit, tb.b, tb.truncated, want)
		}
	}
}
