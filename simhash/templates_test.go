package simhash

import (
	"fmt"
	"math/bits"
	"strings"
	"testing"
)

// The tests of this file are the regression tests of Version 2: pages of
// one template that differ in names and numbers are not near-duplicates,
// while copies of one page that differ in a date, a counter or an ad
// block still are.

// product is one page of the test catalogue.
type product struct{ name, sku, price string }

// catalogue returns n products with distinct names, SKUs and prices.
// Names are colour, material and item, so that many pairs share two of
// their three words ("Teal Oak Chair", "Rust Oak Chair").
func catalogue(n int) []product {
	colours := strings.Fields("Red Blue Green Black White Grey Navy Olive Amber Teal Coral Ivory Plum Rust Sand Slate Mint Ochre Pearl Cobalt")
	materials := strings.Fields("Oak Pine Steel Brass Linen Wool Cotton Leather Walnut Bamboo Copper Glass")
	items := strings.Fields("Chair Table Lamp Shelf Stool Bench Desk Mirror Basket Rug Clock Vase Tray Cabinet Bowl")
	ps := make([]product, n)
	for i := range ps {
		c, m, it := i%len(colours), i/len(colours)%len(materials), i/(len(colours)*len(materials))%len(items)
		ps[i] = product{
			name:  colours[c] + " " + materials[m] + " " + items[it],
			sku:   fmt.Sprintf("NW-%06d", 100000+i*7919%900000),
			price: fmt.Sprintf("%d.%02d", 5+i*37%400, i*53%100),
		}
	}
	return ps
}

// productPage renders p with the shop's one template: a header, a nav, the
// product's name (in the title, the breadcrumb, the heading and the
// description), SKU and price, and about 170 words of delivery, returns,
// care and footer text that every page shares.
func productPage(p product) string {
	return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>` + p.name + ` – Northwind Supply</title>
<link rel="stylesheet" href="/site.css"></head><body>
<header><p class="logo">Northwind Supply</p><nav><a href="/">Home</a> <a href="/furniture/">Furniture</a> <a href="/lighting/">Lighting</a> <a href="/basket">Basket</a></nav></header>
<main><p class="crumbs"><a href="/">Home</a> › <a href="/furniture/">Furniture</a> › ` + p.name + `</p>
<h1>` + p.name + `</h1>
<p class="sku">SKU ` + p.sku + `</p><p class="price">` + p.price + ` EUR <small>incl. VAT</small></p>
<p>In stock: ships within 2 working days.</p><button>Add to basket</button>
<h2>Description</h2><p>The ` + p.name + ` is made in our workshop from carefully selected materials and finished by hand. Every piece is inspected before it leaves us.</p>
<h2>Delivery and returns</h2><p>We deliver to most European countries. Orders placed before noon on a working day are dispatched the same day.
Delivery is free for orders over 50 EUR; below that a flat fee applies. You may return any item within 30 days of delivery for a full refund,
provided it is unused and in its original packaging. To start a return, contact our customer service with your order number. Refunds are made
to the original method of payment within 14 days of receiving the item.</p>
<h2>Care</h2><p>Wipe with a soft dry cloth. Avoid direct sunlight and sources of heat. Do not use abrasive cleaners or solvents.</p></main>
<footer><p>Our team answers questions by email and telephone from Monday to Friday, nine to five. Sign up for our newsletter to hear about
new products and seasonal offers.</p><p>Northwind Supply is a family business that has made furniture and home goods since 1952.</p>
<p><a href="/privacy">Privacy policy</a> · <a href="/terms">Terms and conditions</a> · <a href="/imprint">Imprint</a> · © 2026 Northwind Supply. All prices include VAT.</p></footer>
</body></html>`
}

func htmlFingerprint(t testing.TB, f Fingerprinter, page string) uint64 {
	t.Helper()
	fp, err := f.FingerprintHTML(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

// nearPairs adds fps to an Index with k=3 and returns the pairs (i < j)
// it reports, and the smallest distance between any two of fps.
func nearPairs(t *testing.T, fps []uint64) (pairs [][2]int, minDist int) {
	t.Helper()
	ix, err := NewIndex(Options{K: 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, fp := range fps {
		if err := ix.Add(fp, uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i, fp := range fps {
		for _, m := range ix.Near(fp) {
			if j := int(m.ID); j > i {
				pairs = append(pairs, [2]int{i, j})
			}
		}
	}
	minDist = 64
	for i := range fps {
		for j := i + 1; j < len(fps); j++ {
			minDist = min(minDist, bits.OnesCount64(fps[i]^fps[j]))
		}
	}
	return pairs, minDist
}

// TestTemplatedCatalogueNotNearDuplicates: 1 200 product pages of one
// template, which differ only in their names, SKUs and prices, are no two
// within 3 bits. Version 1 (numbers folded, repeated features counted
// again, no title) put most of them within 3 bits of another.
func TestTemplatedCatalogueNotNearDuplicates(t *testing.T) {
	ps := catalogue(1200)
	fps := make([]uint64, len(ps))
	for i, p := range ps {
		fps[i] = htmlFingerprint(t, Fingerprinter{}, productPage(p))
	}
	pairs, minDist := nearPairs(t, fps)
	t.Logf("%d product pages: %d pairs within 3 bits, smallest distance %d", len(ps), len(pairs), minDist)
	for _, p := range pairs[:min(len(pairs), 5)] {
		t.Errorf("%q and %q are %d bits apart", ps[p[0]].name, ps[p[1]].name, Distance(fps[p[0]], fps[p[1]]))
	}
	// Unrelated pages are far from the catalogue.
	for _, u := range unrelated {
		for i, fp := range fps {
			if d := Distance(fp, Fingerprint(u)); d <= 3 {
				t.Errorf("%q is %d bits from product %d", u, d, i)
			}
		}
	}
}
