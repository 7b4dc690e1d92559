package simhash

import (
	"strings"
	"testing"
)

func TestFingerprintHTMLVisibleTextOnly(t *testing.T) {
	page := `<!doctype html><html><head><title>Site name</title>
<script>var tracking = "the quick brown fox";</script><style>body{color:red}</style></head>
<body><nav>Home | About | Contact</nav>
<p>The <b>qu</b>ick brown fox&nbsp;jumps over the la<span>zy</span> dog</p>
<noscript>enable javascript</noscript><template>hidden words</template></body></html>`
	got, err := FingerprintHTML(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	if want := Fingerprint(seedA); got != want {
		t.Fatalf("HTML fingerprint %016x, plain text %016x (distance %d)", got, want, Distance(got, want))
	}
	// Block-level tags separate words.
	got, _ = FingerprintHTML(strings.NewReader("<p>brown</p><p>fox</p>"))
	if got != Fingerprint("brown fox") {
		t.Fatal("block tags did not separate words")
	}
	// An unclosed <head> ends at <body>.
	got, _ = FingerprintHTML(strings.NewReader("<head><title>x</title><body>brown fox"))
	if got != Fingerprint("brown fox") {
		t.Fatal("body text after an unclosed head was skipped")
	}
}

func TestFingerprintHTMLBoundedToken(t *testing.T) {
	huge := "<p " + strings.Repeat("a", maxHTMLToken+10) + ">"
	if _, err := FingerprintHTML(strings.NewReader(huge)); err == nil {
		t.Fatal("a tag over the token limit was accepted")
	}
}

func FuzzFingerprintHTML(f *testing.F) {
	f.Add("<p>The quick <b>brown</b> fox</p><script>x</script>")
	f.Add("<nav><nav></nav>text")
	f.Fuzz(func(t *testing.T, s string) {
		FingerprintHTML(strings.NewReader(s))
	})
}
