package markdown

import (
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// render writes an HTML fragment's body as Markdown, without main-content
// extraction, so the cases test the writer alone.
func render(t *testing.T, src string) string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse("https://example.com/a/page.html")
	r := newRenderer(base)
	r.block(doc, 0)
	md, _ := r.finish()
	return md
}

func TestRender(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"paragraphs collapse space", "<p>one\n  two</p><p> three </p>", "one two\n\nthree\n"},
		{"headings", "<h2>Sub <i>title</i></h2><p>x</p>", "## Sub *title*\n\nx\n"},
		{"emphasis touches its text", "<p>a<b> bold </b>b <em>it</em>.</p>", "a **bold** b *it*.\n"},
		{"empty emphasis dropped", "<p>a<b> </b>b</p>", "a b\n"},
		{"escapes markup characters", "<p>2*3 [x] a_b _c &lt;d&gt; \\</p>", "2\\*3 \\[x\\] a_b \\_c \\<d> \\\\\n"},
		{"escapes line starts", "<p># no</p><p>- no</p><p>1. no</p><p>2024) no</p>", "\\# no\n\n\\- no\n\n1\\. no\n\n2024\\) no\n"},
		{"reference links, deduplicated", `<p><a href="x">X</a>, <a href="/y?q=1">Y</a>, <a href="https://example.com/a/x">again</a></p>`,
			"[X][1], [Y][2], [again][1]\n\n[1]: https://example.com/a/x\n[2]: https://example.com/y?q=1\n"},
		{"links that are not links", `<p><a href="#top">top</a> <a href="javascript:go()">js</a> <a href="mailto:a@b">mail</a> <a href="/z"><img src=i></a></p>`,
			"top js mail\n"},
		{"bullet and nested ordered list", "<ul><li>a<ol start=3><li>b</li><li>c</li></ol></li><li>d</li></ul>",
			"- a\n  3. b\n  4. c\n- d\n"},
		{"list item with paragraphs", "<ol><li><p>one</p><p>two</p></li></ol>", "1. one\n\n   two\n"},
		{"navigation list left out", `<p>x</p><ul><li><a href=/1>1</a></li><li><a href=/2>2</a></li><li><a href=/3>3</a></li></ul>`, "x\n"},
		{"blockquote", "<blockquote><p>q1</p><p>q2</p></blockquote>", "> q1\n>\n> q2\n"},
		{"line break", "<p>a<br>b</p>", "a\nb\n"},
		{"preformatted", "<pre>if x {\n  ```\n}</pre>", "````\nif x {\n  ```\n}\n````\n"},
		{"inline code", "<p>use <code>a`b</code> and <code>`c</code></p>", "use ``a`b`` and `` `c ``\n"},
		{"table", "<table><tr><th>k</th><th>v</th></tr><tr><td>a|b</td></tr></table>", "| k | v |\n| --- | --- |\n| a\\|b |  |\n"},
		{"layout table", "<table><tr><td><p>one</p></td><td><p>two</p></td></tr></table>", "one\n\ntwo\n"},
		{"skipped elements", "<p>a<script>x</script><style>y</style><img alt=pic>b</p>", "ab\n"},
		{"rule", "<p>a</p><hr><p>b</p>", "a\n\n* * *\n\nb\n"},
		{"block inside link", `<a href="/k"><div>one</div><div>two</div></a>`, "[one two][1]\n\n[1]: https://example.com/k\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := render(t, tc.in); got != tc.want {
				t.Errorf("got\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}
