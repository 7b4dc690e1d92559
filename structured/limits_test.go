package structured

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// hasLimit reports whether d reports the limit named name.
func hasLimit(d *Data, name string) bool {
	for _, err := range d.Errors {
		if errors.Is(err, ErrLimit) && strings.Contains(err.Error(), name) {
			return true
		}
	}
	for _, b := range d.JSONLD {
		if errors.Is(b.Err, ErrLimit) && strings.Contains(b.Err.Error(), name) {
			return true
		}
	}
	return false
}

// Hostile pages end within the limits, each limit reported with ErrLimit.
func TestLimits(t *testing.T) {
	ld := func(s string) string { return `<script type="application/ld+json">` + s + `</script>` }
	nested := func(n int, open, close string) string {
		return strings.Repeat(open, n) + strings.Repeat(close, n)
	}
	var many strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&many, `<div itemscope><span itemprop=n>%d</span></div>`, i)
	}
	// Every item references the same big subtree.
	var refs strings.Builder
	refs.WriteString(`<div id=big>` + strings.Repeat(`<span itemprop=x>y</span>`, 2000) + `</div>`)
	for range 2000 {
		refs.WriteString(`<div itemscope itemref=big></div>`)
	}
	for _, c := range []struct {
		name  string
		page  string
		opts  Config
		limit string
		check func(*Data) bool
	}{
		{"deep JSON", ld(`{"a":` + nested(100000, "[", "]") + `,"b":1}`), Config{}, "MaxDepth",
			func(d *Data) bool { return d.JSONLD[0].Items[0].String("b") == "1" }},
		{"deep JSON cut short", ld(strings.Repeat(`{"a":`, 200000)), Config{}, "MaxDepth", nil},
		{"deep microdata", `<div itemscope>` + nested(500, `<div itemscope itemprop=p>`, `</div>`), Config{}, "MaxDepth",
			func(d *Data) bool { return d.Microdata[0].Item("p") != nil }},
		{"items", many.String(), Config{MaxItems: 1000}, "MaxItems",
			func(d *Data) bool { return len(d.Microdata) == 1000 }},
		{"properties", ld(`{"a":[` + strings.Repeat(`1,`, 100000) + `1]}`), Config{}, "MaxProperties",
			func(d *Data) bool { return len(d.JSONLD[0].Items[0].Values("a")) == DefaultMaxProperties }},
		{"long JSON string", ld(`{"a":"` + strings.Repeat("é", 100000) + `"}`), Config{}, "MaxStringBytes",
			func(d *Data) bool { return len(d.JSONLD[0].Items[0].String("a")) == DefaultMaxStringBytes }},
		{"long text", `<p itemscope><b itemprop=a>` + strings.Repeat("word ", 100000) + `</b>`, Config{}, "MaxStringBytes", nil},
		{"blocks", strings.Repeat(ld(`{}`), 100), Config{}, "MaxBlocks",
			func(d *Data) bool { return len(d.JSONLD) == DefaultMaxBlocks }},
		{"block bytes", ld(`{"a":"b", "c":"` + strings.Repeat("x", 2<<20) + `"}`), Config{}, "MaxBlockBytes",
			func(d *Data) bool { return d.JSONLD[0].Items[0].String("a") == "b" && d.JSONLD[0].Raw != nil }},
		{"meta", strings.Repeat(`<meta property="og:image" content="x">`, 2000), Config{}, "MaxMeta",
			func(d *Data) bool { return len(d.OpenGraph.Meta) == DefaultMaxMeta }},
		{"input", `<meta property="og:title" content="t">` + strings.Repeat("<p>x</p>", 1000), Config{MaxInputBytes: 100}, "page longer",
			func(d *Data) bool { return d.OpenGraph.Get("og:title") == "t" }},
		{"itemref work", refs.String(), Config{}, "MicrodataVisitsPerNode", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := c.opts.ParseBytes([]byte(c.page), "http://ex.test/")
			if !hasLimit(d, c.limit) {
				t.Errorf("%s not reported: errors %v", c.limit, d.Errors)
			}
			if c.check != nil && !c.check(d) {
				t.Error("what came before the limit was not kept")
			}
		})
	}
}

// itemref cycles and an item that is its own property end, as HTML §5.2.5
// and §5.3.1 say: an element is crawled once per item, and an item inside
// itself is "ERROR".
func TestMicrodataCycles(t *testing.T) {
	page := `<div itemscope itemref="a"><p itemprop=name>top</p></div>
<div id=a itemprop=self itemscope itemref=a><span itemprop=x>1</span></div>
<div itemscope id=loop itemref=loop><span itemprop=y>2</span></div>`
	d := ParseBytes([]byte(page), "")
	if len(d.Microdata) != 2 {
		t.Fatalf("%d items, want 2", len(d.Microdata))
	}
	self := d.Microdata[0].Item("self")
	if self == nil || self.String("x") != "1" {
		t.Fatalf("self %+v", self)
	}
	if d.Microdata[1].String("y") != "2" {
		t.Errorf("loop %+v", d.Microdata[1].Properties)
	}
	// Two items that name each other with itemref.
	page = `<div itemscope><div id=p1 itemprop=a itemscope itemref=p2><b itemprop=z>3</b></div></div>
<div id=p2 itemprop=b itemscope itemref=p1></div>`
	d = ParseBytes([]byte(page), "")
	a := d.Microdata[0].Item("a")
	if a == nil || a.String("z") != "3" || a.Item("b") == nil || a.Item("b").String("a") != "ERROR" {
		t.Errorf("a %+v", a)
	}
}
