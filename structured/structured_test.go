package structured

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the testdata/*.golden.json files")

// view is what a golden file records of a page's Data: the JSON-LD items
// as well as the blocks' JSON.
func view(d *Data) any {
	type block struct {
		Items []*Item         `json:"items"`
		Raw   json.RawMessage `json:"raw,omitempty"`
		Error string          `json:"error,omitempty"`
	}
	var v struct {
		JSONLD    []block   `json:"jsonld"`
		Microdata []*Item   `json:"microdata"`
		OpenGraph OpenGraph `json:"opengraph"`
		Twitter   Meta      `json:"twitter"`
		Errors    []string  `json:"errors,omitempty"`
	}
	for _, b := range d.JSONLD {
		x := block{Items: b.Items, Raw: b.Raw}
		if b.Err != nil {
			x.Error = b.Err.Error()
		}
		v.JSONLD = append(v.JSONLD, x)
	}
	v.Microdata, v.OpenGraph, v.Twitter = d.Microdata, d.OpenGraph, d.Twitter
	for _, err := range d.Errors {
		v.Errors = append(v.Errors, err.Error())
	}
	return v
}

// TestGolden parses each testdata page and compares everything found with
// its golden file (go test -run TestGolden -update rewrites them).
func TestGolden(t *testing.T) {
	pages, _ := filepath.Glob("testdata/*.html")
	if len(pages) == 0 {
		t.Fatal("no testdata pages")
	}
	for _, page := range pages {
		name := strings.TrimSuffix(filepath.Base(page), ".html")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			d := ParseBytes(body, "https://site.example/pages/"+name+".html")
			got, err := json.MarshalIndent(view(d), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			golden := filepath.Join("testdata", name+".golden.json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s:\n%s", page, golden, got)
			}
		})
	}
}

func parseFile(t *testing.T, name, pageURL string) *Data {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return ParseBytes(body, pageURL)
}

// The product page's JSON-LD, read through the helpers.
func TestProduct(t *testing.T) {
	d := parseFile(t, "product.html", "https://shop.northpeak.example/p/alpine-trail-30")
	ps := d.Find("Product")
	if len(ps) != 1 {
		t.Fatalf("%d products, want 1", len(ps))
	}
	p := ps[0]
	if p.ID != "https://shop.northpeak.example/p/alpine-trail-30#product" {
		t.Errorf("@id %q, want it resolved against the page", p.ID)
	}
	check := func(what, got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %q, want %q", what, got, want)
		}
	}
	check("name", p.String("name"), "Alpine Trail 30L Backpack")
	check("price", p.Item("offers").String("price"), "129.00")
	check("brand", p.Item("brand").String("name"), "Northpeak")
	check("rating", p.Item("aggregateRating").String("ratingValue"), "4.6")
	if v := p.Item("aggregateRating").Values("ratingValue"); len(v) != 1 || v[0].Kind != KindNumber {
		t.Errorf("ratingValue %+v, want a number", v)
	}
	if imgs := p.Strings("image"); len(imgs) != 2 {
		t.Errorf("images %q, want the array's 2", imgs)
	}
	if rs := p.Items("review"); len(rs) != 2 || rs[1].Item("author").String("name") != "Tom B." {
		t.Errorf("reviews %+v", rs)
	}
	if n := len(d.Find("Person")); n != 2 {
		t.Errorf("%d nested persons found, want 2", n)
	}
	if d.JSONLD[0].Err != nil || !json.Valid(d.JSONLD[0].Raw) {
		t.Errorf("clean block: err %v, raw valid %v", d.JSONLD[0].Err, json.Valid(d.JSONLD[0].Raw))
	}
	// Open Graph: two images, the second's height not a number.
	og := d.OpenGraph
	if len(og.Images) != 2 || og.Images[0] != (Media{
		URL: "https://cdn.northpeak.example/img/at30-front.jpg", SecureURL: "https://cdn.northpeak.example/img/at30-front.jpg",
		Type: "image/jpeg", Alt: "The Alpine Trail 30L in slate blue, front view", Width: 1200, Height: 630,
	}) || og.Images[1].Width != 1200 || og.Images[1].Height != 0 {
		t.Errorf("images %+v", og.Images)
	}
	check("product:price:amount", og.Get("product:price:amount"), "129.00")
	check("twitter:card", d.Twitter.Get("twitter:card"), "summary_large_image")
	// The microdata breadcrumb.
	bc := d.Find("BreadcrumbList")
	if len(bc) != 1 || len(d.Microdata) != 1 {
		t.Fatalf("breadcrumbs %d, microdata items %d", len(bc), len(d.Microdata))
	}
	items := bc[0].Items("itemListElement")
	if len(items) != 3 || items[1].String("item") != "https://shop.northpeak.example/c/backpacks" || items[1].String("name") != "Backpacks" || items[2].String("position") != "3" {
		t.Errorf("breadcrumb items %+v", items)
	}
}

// The article's Yoast-style @graph: its members are the block's items,
// relative @ids resolve against <base>.
func TestArticleGraph(t *testing.T) {
	d := parseFile(t, "article.html", "https://www.coastalherald.example/news/2026/11/cycle-lanes-harbour/")
	if len(d.JSONLD) != 1 || len(d.JSONLD[0].Items) != 6 {
		t.Fatalf("blocks %d, items %d, want 1 and the graph's 6", len(d.JSONLD), len(d.JSONLD[0].Items))
	}
	a := d.Find("NewsArticle")[0]
	if a.ID != "https://www.coastalherald.example/news/2026/11/cycle-lanes-harbour/#article" {
		t.Errorf("article @id %q", a.ID)
	}
	if a.Item("publisher").ID != "https://www.coastalherald.example/#organization" || a.String("wordCount") != "642" || a.String("isAccessibleForFree") != "true" {
		t.Errorf("article %+v", a.Properties)
	}
	if org := d.ByID(a.Item("publisher").ID); org == nil || org.String("name") != "The Coastal Herald" || org.Item("logo").String("width") != "600" {
		t.Errorf("publisher by @id: %+v", org)
	}
	if d.ByID("https://www.coastalherald.example/#nothing") != nil {
		t.Error("ByID found an item that is not there")
	}
	if !d.Find("ItemPage")[0].Is("https://schema.org/WebPage") {
		t.Error("a node of two types is not both")
	}
	if tags := d.OpenGraph.All("article:tag"); strings.Join(tags, ",") != "transport,cycling" {
		t.Errorf("article:tag %q", tags)
	}
	if len(d.OpenGraph.Images) != 1 || d.OpenGraph.Images[0].Width != 1600 {
		t.Errorf("og images %+v", d.OpenGraph.Images)
	}
}

// Microdata value rules (HTML §5.2.4) and itemref.
func TestRecipeMicrodata(t *testing.T) {
	d := parseFile(t, "recipe.html", "https://kitchen.example/recipes/apple-crumble")
	if len(d.Microdata) != 1 {
		t.Fatalf("%d top-level items, want the recipe (the template's is not in the document)", len(d.Microdata))
	}
	r := d.Microdata[0]
	for prop, want := range map[string]string{
		"name":          "Grandma's Apple Crumble",
		"image":         "https://kitchen.example/images/crumble.jpg", // img src, resolved
		"description":   "A buttery, oaty crumble over tart Bramley apples.",
		"prepTime":      "PT20M",                                         // meta content
		"cookTime":      "PT40M",                                         // time datetime
		"datePublished": "2019-10-04",                                    // time without datetime: text
		"url":           "https://kitchen.example/recipes/apple-crumble", // a href
	} {
		if got := r.String(prop); got != want {
			t.Errorf("%s = %q, want %q", prop, got, want)
		}
	}
	if v := r.Values("image"); v[0].Kind != KindURL {
		t.Errorf("image kind %v, want KindURL", v[0].Kind)
	}
	if n := len(r.Strings("recipeIngredient")); n != 5 {
		t.Errorf("%d ingredients, want 5", n)
	}
	steps := r.Items("recipeInstructions")
	if len(steps) != 3 || steps[2].String("text") != "Scatter over the apples and bake for 40 minutes." {
		t.Errorf("steps %+v", steps)
	}
	rating := r.Item("aggregateRating")
	if rating.String("ratingValue") != "4.8" || rating.String("ratingCount") != "57" {
		t.Errorf("rating %+v, want meter and data values", rating.Properties)
	}
	// itemref brings in the nutrition and the author from the aside.
	if r.Item("nutrition").String("calories") != "410 kcal" {
		t.Errorf("nutrition %+v", r.Item("nutrition"))
	}
	author := r.Item("author")
	if author == nil || author.ID != "https://kitchen.example/people/edith" || author.String("name") != "Edith Marsh" {
		t.Errorf("author %+v", author)
	}
	if img := d.OpenGraph.Images; len(img) != 1 || img[0].URL != "https://kitchen.example/images/crumble.jpg" {
		t.Errorf("og:image %+v, want it resolved", img)
	}
}

// Broken JSON-LD blocks: what can be read is kept, each block says what
// was wrong, and the page does not fail.
func TestMalformedBlocks(t *testing.T) {
	d := parseFile(t, "malformed.html", "https://harbourbakery.example/")
	if len(d.JSONLD) != 7 {
		t.Fatalf("%d blocks, want 7 (the application/json script is not JSON-LD)", len(d.JSONLD))
	}
	for i, want := range []struct {
		items  []string // the items' names
		errors bool
		raw    bool
	}{
		{[]string{"Harbour Bakery"}, true, true},                        // trailing commas inside <!-- -->
		{[]string{"Harbour Bakery Ltd"}, true, true},                    // a raw newline in a string, //<![CDATA[
		{[]string{"Harbour Bakery", "Harbour Bakery Café"}, true, true}, // two objects one after another
		{[]string{"Bread-making workshop"}, true, true},                 // a comment, cut short
		{nil, true, false}, // empty
		{nil, true, false}, // JavaScript
		{[]string{"upper-case type", "second"}, false, true}, // a clean array
	} {
		b := d.JSONLD[i]
		var names []string
		for _, it := range b.Items {
			names = append(names, it.String("name"))
		}
		if strings.Join(names, "|") != strings.Join(want.items, "|") {
			t.Errorf("block %d: items %q, want %q", i, names, want.items)
		}
		if (b.Err != nil) != want.errors || b.Err != nil && !errors.Is(b.Err, ErrMalformed) {
			t.Errorf("block %d: error %v", i, b.Err)
		}
		if (b.Raw != nil) != want.raw || b.Raw != nil && !json.Valid(b.Raw) {
			t.Errorf("block %d: raw %s", i, b.Raw)
		}
	}
	ev := d.Find("Event")[0]
	if ev.Item("offers").String("price") != "35" || ev.Item("location").String("address") != "12 Quay St\n" {
		t.Errorf("the cut-short event: %+v", ev.Properties)
	}
	if desc := d.Find("Organization")[0].String("description"); desc != "Family bakers since 1952.\nSourdough, pasties and cakes." {
		t.Errorf("description %q", desc)
	}
}
