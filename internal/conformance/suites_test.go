package main

import (
	"bytes"
	"path/filepath"
	"testing"
)

// TestSuitesInRepository runs every registered suite on its vectors in
// testdata (copied from their public sources; see testdata/README.md), so
// that go test checks the conformance the README claims. A failure that
// is not a known, explained gap fails the test.
func TestSuitesInRepository(t *testing.T) {
	for _, name := range suiteNames() {
		t.Run(name, func(t *testing.T) {
			var out, errs bytes.Buffer
			file := filepath.Join("testdata", name+".json")
			if code := runMain([]string{"-suite", name, "-file", file}, &out, &errs); code != 0 {
				t.Fatalf("suite %s exited %d:\n%s%s", name, code, out.String(), errs.String())
			}
			lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
			t.Logf("%s: %s", name, lines[len(lines)-1])
		})
	}
}
