package fetch

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
)

// BenchmarkDecodeBrotli decodes a 100 KB brotli page as the Fetcher does
// (pooled reader, first buffer sized from the compressed length) and as it
// did before (a new reader per body, a buffer grown from 4 KiB), in the same
// run: the ratio of the two ns/op is the saving.
func BenchmarkDecodeBrotli(b *testing.B) {
	var page strings.Builder
	for i := 0; page.Len() < 100<<10; i++ {
		fmt.Fprintf(&page, `<p class="c%d">Paragraph %d of the article, <a href="/a/%d">with a link</a> and some words to read.</p>`+"\n", i%7, i, i)
	}
	var enc bytes.Buffer
	w := brotli.NewWriterLevel(&enc, 5)
	w.Write([]byte(page.String()))
	w.Close()
	compressed := enc.Bytes()
	lim := bodyLimits{maxBody: 10 << 20, maxExpansion: 100, expansionFloor: 1 << 20}
	run := func(b *testing.B, pooled bool) {
		b.SetBytes(int64(page.Len()))
		b.ReportAllocs()
		for b.Loop() {
			wire := &wireCounter{r: bytes.NewReader(compressed), limit: lim.maxBody + 1}
			var res bodyResult
			var err error
			if pooled {
				dec, closeDec, derr := decoder(wire, []string{"br"})
				if derr != nil {
					b.Fatal(derr)
				}
				res, err = readBody(dec, wire, true, int64(len(compressed))*compressedRatio, lim)
				closeDec()
			} else {
				res, err = readBody(&brReader{r: brotli.NewReader(wire)}, wire, true, -1, lim)
			}
			if err != nil || len(res.body) != page.Len() {
				b.Fatalf("decoded %d bytes, err %v", len(res.body), err)
			}
		}
	}
	b.Run("new-reader", func(b *testing.B) { run(b, false) })
	b.Run("pooled", func(b *testing.B) { run(b, true) })
}
