package trap

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
)

// legitURL is one URL of the legitimate corpus, with the page it is linked
// from and the fingerprint of its content.
type legitURL struct {
	url, source string
	fp          uint64
}

var corpusWords = strings.Fields(`apple river stone garden window market city winter summer energy
	policy health travel science music film school court budget climate ocean forest mountain
	bridge harbor island village station coffee bread cheese garden lamp chair table shirt
	jacket boots dress linen wool cotton leather silver golden purple orange yellow green
	black white north south east west early late quick quiet bright dark small large`)

var (
	colors   = strings.Fields("red blue green black white grey navy beige")
	sizes    = strings.Fields("xs s m l xl 38 40 42")
	sorts    = strings.Fields("price_asc price_desc newest")
	sections = strings.Fields("world politics business tech science sport culture opinion")
	langs    = strings.Fields("en de fr es it nl pl ja")
)

// legitCorpus generates a deterministic corpus of legitimate-looking URLs
// in the shapes real sites use: news sites with dated articles (the past
// four years), section pagination, tags and archives; shops with filter
// combinations, faceted filters, products, variants and reviews; wikis with
// language subdomains, history and diff links, and deep documentation
// trees; code hosts with nested source trees and commit hashes; forums.
// Numeric ids of four digits followed by a small number (a forum topic and
// post, a product and page, an issue and comment) look like a year and a
// month and must not be taken for dates.
func legitCorpus() []legitURL {
	r := rand.New(rand.NewPCG(2025, 11))
	var out []legitURL
	add := func(u, src string, fp uint64) { out = append(out, legitURL{u, src, fp}) }
	word := func() string { return corpusWords[r.IntN(len(corpusWords))] }
	slug := func(sep string) string {
		n := 3 + r.IntN(4)
		w := make([]string, n)
		for i := range w {
			w[i] = word()
		}
		if r.IntN(8) == 0 {
			w[r.IntN(n)] = fmt.Sprint(2 + r.IntN(30)) // "top-10-…"
		}
		return strings.Join(w, sep)
	}
	distinctWords := func(n int) []string {
		p := r.Perm(len(corpusWords))[:n]
		w := make([]string, n)
		for i, j := range p {
			w[i] = corpusWords[j]
		}
		return w
	}
	fp := func() uint64 { return r.Uint64() }

	for h := 0; h < 25; h++ { // news
		base := fmt.Sprintf("https://news%02d.example", h)
		home := base + "/"
		add(home, "", fp())
		for _, sec := range sections {
			add(base+"/"+sec, home, fp())
			prev := base + "/" + sec
			for p := 2; p <= 40; p++ {
				u := fmt.Sprintf("%s/%s?page=%d", base, sec, p)
				add(u, prev, fp())
				prev = u
			}
		}
		for a := 0; a < 1000; a++ {
			day := now.AddDate(0, 0, -r.IntN(4*365))
			u := base + day.Format("/2006/01/02/") + slug("-")
			src := fmt.Sprintf("%s/%s?page=%d", base, sections[r.IntN(len(sections))], 2+r.IntN(39))
			f := fp()
			add(u, src, f)
			if a%5 == 0 {
				add(u+"/amp", u, f^1)
			}
			if a%10 == 0 {
				add(u+"?print=1", u, f)
			}
		}
		for i := 0; i < 60; i++ {
			tag := base + "/tag/" + word() + "-" + word()
			add(tag, home, fp())
			prev := tag
			for p := 2; p <= 5; p++ {
				u := fmt.Sprintf("%s/page/%d/", tag, p)
				add(u, prev, fp())
				prev = u
			}
			add(base+"/author/"+word()+"-"+word(), home, fp())
		}
		add(base+"/archive/", home, fp())
		for m := 0; m < 120; m++ {
			month := now.AddDate(0, -m, 0)
			mu := base + month.Format("/archive/2006/01/")
			add(mu, base+"/archive/", fp())
			if m < 3 {
				for d := 1; d <= 28; d++ {
					add(base+month.Format("/2006/01/")+fmt.Sprintf("%02d/", d), mu, fp())
				}
			}
		}
		// An events page lists what is coming in the next twelve months.
		for m := 0; m < 12; m++ {
			add(base+now.AddDate(0, m, 0).Format("/events/2006/01/"), base+"/events/", fp())
		}
	}

	for h := 0; h < 8; h++ { // shops
		base := fmt.Sprintf("https://shop%02d.example", h)
		home := base + "/"
		add(home, "", fp())
		add(base+"/search?q=lamp", home, fp())
		for i := 0; i < 20; i++ {
			w := word()
			add(base+"/search?q="+w, home, fp())
			add(base+"/search?q="+w+"+"+word(), base+"/search?q="+w, fp())
		}
		var listings []string
		for c := 0; c < 10; c++ {
			cat := base + "/c/" + word()
			add(cat, home, fp())
			for s := 0; s < 6; s++ {
				sub := cat + "/" + word() + "-" + word()
				add(sub, cat, fp())
				listings = append(listings, sub)
				for _, col := range colors {
					cu := sub + "?color=" + col
					add(cu, sub, fp())
					for _, sz := range sizes[:4] {
						add(cu+"&size="+sz, cu, fp())
					}
					fu := sub + "?filters=" + col
					add(fu, sub, fp())
					for _, sz := range sizes[4:7] {
						add(fu+","+sz, fu, fp())
						add(fu+","+sz+",cotton", fu+","+sz, fp())
					}
				}
				for _, so := range sorts {
					add(sub+"?sort="+so, sub, fp())
				}
				for p := 2; p <= 6; p++ {
					add(fmt.Sprintf("%s?page=%d", sub, p), sub, fp())
				}
			}
		}
		for p := 0; p < 1500; p++ {
			id := 10000 + r.IntN(900000)
			u := fmt.Sprintf("%s/p/%s-%d", base, slug("-"), id)
			src := listings[r.IntN(len(listings))]
			add(u, src, fp())
			if p%3 == 0 {
				pu := base + "/products/" + slug("-")
				add(pu, src, fp())
				for v := 0; v < 2+r.IntN(3); v++ {
					add(fmt.Sprintf("%s?variant=%d", pu, 39000000000000+r.Int64N(1e12)), pu, fp())
				}
			}
			if p%4 == 0 {
				add(u+"/reviews", u, fp())
				add(u+"/reviews?page=2", u+"/reviews", fp())
			}
			if p%2 == 0 {
				add(fmt.Sprintf("%s/item/%d", base, id), src, fp())
			}
		}
		for p := 0; p < 300; p++ { // four-digit ids with pages: /product/2500/3
			pu := fmt.Sprintf("%s/product/%d", base, 1000+r.IntN(9000))
			add(pu, listings[r.IntN(len(listings))], fp())
			prev := pu
			for pg := 2; pg <= 2+r.IntN(4); pg++ {
				u := fmt.Sprintf("%s/%d", pu, pg)
				add(u, prev, fp())
				prev = u
			}
			cu := fmt.Sprintf("%s/category/%d", base, 1000+r.IntN(9000))
			add(fmt.Sprintf("%s/%d/%s", cu, 1+r.IntN(12), word()), cu, fp())
		}
	}

	for h := 0; h < 12; h++ { // wikis
		dom := fmt.Sprintf("wiki%02d.example", h)
		for li, lang := range langs {
			base := "https://" + lang + "." + dom
			home := base + "/wiki/Main_Page"
			add(home, "", fp())
			n := 400
			if li > 0 {
				n = 120
			}
			prev := home
			for a := 0; a < n; a++ {
				title := strings.ToUpper(slug("_")[:1]) + slug("_")[1:]
				u := base + "/wiki/" + title
				add(u, prev, fp())
				prev = u
				switch a % 7 {
				case 0:
					add(base+"/wiki/Talk:"+title, u, fp())
				case 1:
					add(base+"/w/index.php?title="+title+"&action=history", u, fp())
					add(fmt.Sprintf("%s/w/index.php?title=%s&oldid=%d", base, title, 100000000+r.IntN(900000000)),
						base+"/w/index.php?title="+title+"&action=history", fp())
					add(fmt.Sprintf("%s/w/index.php?title=%s&diff=prev&oldid=%d", base, title, 100000000+r.IntN(900000000)),
						base+"/w/index.php?title="+title+"&action=history", fp())
				case 2:
					add(base+"/wiki/Category:"+strings.ToUpper(word()[:1])+word(), u, fp())
				case 3:
					add(base+"/wiki/Special:WhatLinksHere/"+title, u, fp())
				}
			}
		}
		// Documentation trees, up to 16 levels deep.
		base := "https://docs." + dom
		add(base+"/", "", fp())
		for i := 0; i < 1500; i++ {
			depth := 3 + r.IntN(14)
			w := distinctWords(depth)
			w[0] = "v" + fmt.Sprint(1+r.IntN(4))
			u := base + "/" + strings.Join(w, "/")
			if r.IntN(2) == 0 {
				u += ".html"
			}
			add(u, base+"/"+strings.Join(w[:depth-1], "/")+"/", fp())
		}
	}

	for h := 0; h < 6; h++ { // code hosts
		base := fmt.Sprintf("https://code%02d.example", h)
		add(base+"/", "", fp())
		for rp := 0; rp < 20; rp++ {
			org, repo := word(), word()+"-"+word()
			rb := base + "/" + org + "/" + repo
			add(rb, base+"/", fp())
			for i := 0; i < 40; i++ {
				pkg := distinctWords(1 + r.IntN(4))
				dir := rb + "/tree/main/src/main/java/com/" + org + "/" + strings.Join(pkg, "/")
				add(dir, rb, fp())
				add(dir+"/"+strings.ToUpper(word()[:1])+word()+".java", dir, fp())
				add(strings.Replace(dir, "/tree/main/src/main/", "/tree/main/src/test/", 1), rb, fp())
			}
			for i := 0; i < 40; i++ {
				add(fmt.Sprintf("%s/commit/%016x%016x%08x", rb, r.Uint64(), r.Uint64(), r.Uint32()), rb+"/commits/main", fp())
				add(fmt.Sprintf("%s/issues/%d", rb, 1+r.IntN(5000)), rb+"/issues", fp())
			}
			for i := 0; i < 20; i++ { // an issue's comments: /issues/2045/10
				iu := fmt.Sprintf("%s/issues/%d", rb, 1000+r.IntN(9000))
				add(iu, rb+"/issues", fp())
				for c := 1 + r.IntN(3); c <= 12; c += 1 + r.IntN(4) {
					add(fmt.Sprintf("%s/%d", iu, c), iu, fp())
				}
			}
		}
	}

	for h := 0; h < 8; h++ { // forums
		base := fmt.Sprintf("https://forum%02d.example", h)
		add(base+"/", "", fp())
		for b := 0; b < 10; b++ {
			board := base + "/forum/" + word() + "-" + word()
			add(board, base+"/", fp())
			prev := board
			for p := 2; p <= 30; p++ {
				u := fmt.Sprintf("%s?page=%d", board, p)
				add(u, prev, fp())
				prev = u
			}
		}
		for t := 0; t < 800; t++ {
			tu := fmt.Sprintf("%s/t/%s/%d", base, slug("-"), 1000+r.IntN(90000))
			add(tu, base+"/forum/x", fp())
			for p := 2; p <= 1+r.IntN(4); p++ {
				add(fmt.Sprintf("%s/%d", tu, p*20), tu, fp())
			}
			add(fmt.Sprintf("%s/members/%s.%d/", base, word(), 1+r.IntN(99999)), tu, fp())
		}
		// Discourse links each post of a topic as /t/slug/topic/post, from
		// the topic and from the other posts; topics numbered 1000 to
		// 9999 make these look like months.
		for t := 0; t < 300; t++ {
			tu := fmt.Sprintf("%s/t/%s/%d", base, slug("-"), 1000+r.IntN(9000))
			add(tu, base+"/forum/x", fp())
			prev := tu
			for p := 1; p <= 1+r.IntN(12); p++ {
				u := fmt.Sprintf("%s/%d", tu, p)
				add(u, prev, fp())
				if p%3 == 0 {
					add(fmt.Sprintf("%s/%d", tu, p+1), tu, fp()) // a reply linked from the topic
				}
				prev = u
			}
		}
	}
	return out
}

// TestLegitimateCorpus judges every URL of the legitimate corpus (and
// reports its content, as a crawler would after fetching) and requires
// false rejections below 0.1%.
func TestLegitimateCorpus(t *testing.T) {
	corpus := legitCorpus()
	if len(corpus) < 100_000 {
		t.Fatalf("corpus has %d URLs, want at least 100000", len(corpus))
	}
	d := New(Config{})
	byRule := map[Rule]int{}
	examples := map[Rule][]string{}
	seen := map[string]bool{}
	distinct, rejected := 0, 0
	for _, c := range corpus {
		if seen[c.url] {
			continue
		}
		seen[c.url] = true
		distinct++
		v := d.JudgeAt(now, Candidate{URL: c.url, Source: c.source, Depth: 3})
		if v.Rejected() {
			rejected++
			byRule[v.Rule]++
			if len(examples[v.Rule]) < 3 {
				examples[v.Rule] = append(examples[v.Rule], c.url+" — "+v.Reason)
			}
			continue
		}
		d.Observe(c.url, c.fp)
	}
	rate := float64(rejected) / float64(distinct)
	t.Logf("legitimate corpus: %d distinct URLs, %d rejected (%.4f%%)", distinct, rejected, 100*rate)
	var rules []string
	for r := range byRule {
		rules = append(rules, string(r))
	}
	sort.Strings(rules)
	for _, r := range rules {
		t.Logf("  %s: %d, e.g. %s", r, byRule[Rule(r)], strings.Join(examples[Rule(r)], "; "))
	}
	if rate >= 0.001 {
		t.Errorf("false rejection rate %.4f%%, want below 0.1%%", 100*rate)
	}
}
