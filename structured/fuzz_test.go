package structured

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

var jsonSeeds = []string{
	`{"@context":"https://schema.org","@type":"Product","name":"x","offers":{"@type":"Offer","price":1.5e3}}`,
	`[{"@type":["A","B"],"@id":"/x"},{"@graph":[{"@type":"C","p":{"@list":[1,2,{"@value":"v","@language":"en"}]}}]}]`,
	"<!--\n{\"a\":[1,2,],}\n-->", "//<![CDATA[\n{'a':'b\\'c'}\n//]]>", `{"a":1}{"b":2};[3]`,
	"{\"s\":\"line\nbreak\\x\\u00e9\\ud83d\\ude00\\ud800\"}", `{"a":{"b":[[[`, `{a:1 "b":2, /* c */ "c":-01.}`,
	"\"\xff\xfe\"", `{"@type":"T","n":null,"t":true,"f":false,"e":-0.5E-2}`, "", "var x = 1;",
}

// FuzzJSONLD checks the lenient reader on any block: no panic, within the
// limits, Raw always valid JSON, and a valid block read exactly: kept as
// written, and re-encoded to the same JSON value encoding/json reads.
func FuzzJSONLD(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	opts := &Config{MaxItems: 50, MaxProperties: 200, MaxDepth: 8, MaxStringBytes: 64, MaxBlockBytes: 4096}
	f.Fuzz(func(t *testing.T, block []byte) {
		d := opts.FromNode(scriptDoc(block), "http://ex.test/a/b")
		if len(d.JSONLD) != 1 {
			t.Fatalf("%d blocks from one script", len(d.JSONLD))
		}
		b := d.JSONLD[0]
		if b.Raw != nil && !json.Valid(b.Raw) {
			t.Fatalf("invalid Raw %q", b.Raw)
		}
		if b.Err == nil && b.Raw == nil {
			t.Fatal("no JSON and no error")
		}
		checkLimits(t, d, opts)
		if json.Valid(block) && utf8.Valid(block) && !errors.Is(b.Err, ErrLimit) {
			if b.Err != nil || !bytes.Equal(b.Raw, bytes.TrimSpace(block)) {
				t.Fatalf("valid JSON %q: err %v, raw %q", block, b.Err, b.Raw)
			}
			// The encoder and the string decoder agree with
			// encoding/json.
			l := lexer{b: block, maxDepth: 10000, maxStr: len(block) + 1}
			vals, _, _, _ := l.values()
			if len(vals) != 1 {
				t.Fatalf("valid JSON %q read as %d values", block, len(vals))
			}
			want, _ := decodeNumbers(block)
			got, err := decodeNumbers(encode(nil, &vals[0]))
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("valid JSON %q re-encoded as %s (%v)", block, encode(nil, &vals[0]), err)
			}
		}
	})
}

// decodeNumbers decodes JSON keeping numbers as written.
func decodeNumbers(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// scriptDoc is a document holding one JSON-LD script with text block.
func scriptDoc(block []byte) *html.Node {
	doc := &html.Node{Type: html.DocumentNode}
	s := &html.Node{Type: html.ElementNode, DataAtom: atom.Script, Data: "script",
		Attr: []html.Attribute{{Key: "type", Val: "application/ld+json"}}}
	s.AppendChild(&html.Node{Type: html.TextNode, Data: string(block)})
	doc.AppendChild(s)
	return doc
}

// FuzzParse checks the HTML pass on any page: no panic, within the limits,
// and a result that marshals to JSON.
func FuzzParse(f *testing.F) {
	pages, _ := filepath.Glob("testdata/*.html")
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		`<div itemscope itemref="a b"><p id=a itemprop=x itemscope itemref=b></p><p id=b itemprop=y itemscope itemref=a>t</p></div>`,
		`<base href="//x.test/"><div itemscope itemtype="https://schema.org/Thing http://x/y" itemid=z><a itemprop="url name" href=q>l</a><img itemprop=i src=/i><time itemprop=t>2020</time><data itemprop=d value=1><meter itemprop=m value=2><object itemprop=o data=d></object></div>`,
		`<meta property="og:image" content="a"><meta property="og:image:width" content="x"><meta property="og:image:url" content="b"><meta name="twitter:card og:title" content=c><META PROPERTY=OG:VIDEO:HEIGHT CONTENT=7>`,
		`<template><script type=application/ld+json>{}</script></template><script type=" application/ld+json ">[{"@type":"T"}]</script>`,
	} {
		f.Add([]byte(s))
	}
	opts := &Config{MaxInputBytes: 1 << 16, MaxBlocks: 4, MaxItems: 50, MaxProperties: 200, MaxDepth: 6, MaxStringBytes: 64, MaxMeta: 20, MaxBlockBytes: 2048}
	f.Fuzz(func(t *testing.T, page []byte) {
		d := opts.ParseBytes(page, "http://ex.test/a/b")
		for _, b := range d.JSONLD {
			if b.Raw != nil && !json.Valid(b.Raw) {
				t.Fatalf("invalid Raw %q", b.Raw)
			}
		}
		checkLimits(t, d, opts)
		if _, err := json.Marshal(d); err != nil {
			t.Fatalf("marshal: %v", err)
		}
	})
}

// checkLimits fails t if d holds more than opts allow.
func checkLimits(t *testing.T, d *Data, opts *Config) {
	t.Helper()
	items, props := 0, 0
	str := func(s string) {
		if len(s) > opts.MaxStringBytes {
			t.Fatalf("string of %d bytes, limit %d", len(s), opts.MaxStringBytes)
		}
	}
	for _, it := range d.Items() {
		it.walk(0, func(x *Item) {
			items++
			str(x.ID)
			for _, ty := range x.Types {
				str(ty)
			}
			for k, vs := range x.Properties {
				str(k)
				props += len(vs)
				for _, v := range vs {
					str(v.Text)
				}
			}
		})
	}
	if items > opts.MaxItems || props > opts.MaxProperties {
		t.Fatalf("%d items, %d property values; limits %d, %d", items, props, opts.MaxItems, opts.MaxProperties)
	}
	if opts.MaxBlocks > 0 && len(d.JSONLD) > opts.MaxBlocks {
		t.Fatalf("%d blocks, limit %d", len(d.JSONLD), opts.MaxBlocks)
	}
	if opts.MaxMeta > 0 && len(d.OpenGraph.Meta)+len(d.Twitter) > opts.MaxMeta {
		t.Fatalf("%d meta properties, limit %d", len(d.OpenGraph.Meta)+len(d.Twitter), opts.MaxMeta)
	}
	for _, p := range append(append(Meta{}, d.OpenGraph.Meta...), d.Twitter...) {
		str(p.Name)
		str(p.Content)
	}
}
