package extract

import "testing"

// FuzzScanner compares the scanner with html.Tokenizer token by token on
// arbitrary input, without a buffer limit and with the limit taken from
// the input.
func FuzzScanner(f *testing.F) {
	for _, c := range scanCases {
		f.Add([]byte(c), uint16(0))
	}
	f.Add([]byte(manyAttrs()), uint16(40))
	f.Add([]byte("<a b=c>text<!--x--></a>"), uint16(6))
	f.Add([]byte("<script><!--<script></script>--></script>"), uint16(9))
	f.Fuzz(func(t *testing.T, b []byte, maxBuf uint16) {
		diffScan(t, b, 0)
		if maxBuf > 0 {
			diffScan(t, b, int(maxBuf))
		}
	})
}
