package simhash

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
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
	if want := FingerprintPage("Site name", seedA); got != want {
		t.Fatalf("HTML fingerprint %016x, FingerprintPage %016x (distance %d)", got, want, Distance(got, want))
	}
	// Only the first title outside svg counts; a page without one is its
	// text alone.
	got, _ = FingerprintHTML(strings.NewReader(`<svg><title>icon</title></svg><title>Real</title><title>Second</title><p>brown fox`))
	if got != FingerprintPage("Real", "brown fox") {
		t.Fatal("the title is not the first one outside svg")
	}
	// Block-level tags separate words.
	got, _ = FingerprintHTML(strings.NewReader("<p>brown</p><p>fox</p>"))
	if got != Fingerprint("brown fox") {
		t.Fatal("block tags did not separate words")
	}
	// An unclosed <head> ends at <body>.
	got, _ = FingerprintHTML(strings.NewReader("<head><nav>x</nav><body>brown fox"))
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
	f.Add("<P\tclass=x>a</SPAN\n><br/><Noscript>b</noScript ><x\x00y>")
	f.Fuzz(func(t *testing.T, s string) {
		FingerprintHTML(strings.NewReader(s))
		checkTagAtoms(t, s)
	})
}

// checkTagAtoms checks tagAtom against the tokenizer's own TagName on
// every tag of s: the atoms must agree for every element whose name fits
// maxTagAtom.
func checkTagAtoms(t *testing.T, s string) {
	t.Helper()
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			got := tagAtom(z.Raw())
			name, _ := z.TagName()
			want := atom.Lookup(name)
			if len(name) > maxTagAtom {
				want = 0
			}
			if got != want {
				t.Fatalf("tag %q: tagAtom %v, TagName %q (%v)", z.Raw(), got, name, want)
			}
		}
	}
}

func TestTagAtom(t *testing.T) {
	for raw, want := range map[string]atom.Atom{
		"<p>":                      atom.P,
		"</P>":                     atom.P,
		"<NAV class=x>":            atom.Nav,
		"</noscript\n>":            atom.Noscript,
		"<br/>":                    atom.Br,
		"<custom-element>":         0,
		"<averyveryverylongname1>": 0,
	} {
		if got := tagAtom([]byte(raw)); got != want {
			t.Errorf("tagAtom(%q) = %v, want %v", raw, got, want)
		}
	}
	checkTagAtoms(t, "<HTML><Head><TITLE>t</title></HEAD><body><P\tclass=x>a<Span\f>b</SPAN\n><Br/>"+
		"<Script>if (a<b) {}</SCRIPT ><x\x00y>z</x\x00y></body></html>")
}
